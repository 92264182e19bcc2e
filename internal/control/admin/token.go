package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// MinTokenLen is the shortest bearer token accepted: 16 bytes of base64 or
// hex from a random source (`head -c 24 /dev/urandom | base64`) cannot be
// guessed through a rate-limited port.
const MinTokenLen = 16

// ErrUnauthorized is wrapped by the client when the relay wants a bearer
// token that was not sent or does not match.
var ErrUnauthorized = errors.New("the admin token is missing or wrong")

// ParseToken checks the contents of a token file: surrounding white space
// (a trailing newline) is ignored; what remains must be at least
// MinTokenLen printable ASCII characters without spaces, so that it fits
// in an HTTP header as it is. Errors never quote the token.
func ParseToken(data []byte) (string, error) {
	s := strings.TrimSpace(string(data))
	if len(s) < MinTokenLen {
		return "", fmt.Errorf("token has %d characters, want at least %d", len(s), MinTokenLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c > '~' {
			return "", fmt.Errorf("token has a space, control or non-ASCII character at byte %d", i)
		}
	}
	return s, nil
}

// tokenCheck verifies "Authorization: Bearer TOKEN" in constant time: both
// sides are hashed first, so neither the content nor the length of the
// expected token shows in the timing.
type tokenCheck struct {
	sum [sha256.Size]byte
}

func newTokenCheck(token string) *tokenCheck {
	if token == "" {
		return nil
	}
	return &tokenCheck{sum: sha256.Sum256([]byte(token))}
}

// ok reports whether r carries the token. A nil check admits everything.
func (c *tokenCheck) ok(r *http.Request) bool {
	if c == nil {
		return true
	}
	got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], c.sum[:]) == 1 && found
}
