package socks5

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"

	"github.com/liqo-relay/relay/internal/secretfile"
)

// RFC 1929 username/password authentication for the SOCKS5 proxy.
const (
	socksMethodUserPass = 0x02
	socksAuthVersion    = 1
	socksAuthOK         = 0
	socksAuthFailed     = 1
)

// errSocksAuth: the client did not authenticate (it offered no
// username/password method, or gave a wrong pair).
var errSocksAuth = errors.New("socks5: authentication failed")

// Credentials are the username/password pairs the SOCKS5 proxy
// accepts. Build them with ParseCredentials or LoadCredentials.
// They are never printed.
type Credentials struct {
	users map[string][]byte
}

// LoadCredentials reads a credentials file (see
// ParseCredentials) with secretfile.Read, as the relay reads its
// private key: it must be a regular file (after symbolic links) that group
// and others can neither read nor write, of at most secretfile.MaxSize
// bytes (4 KiB: over a hundred users, more than a proxy for local
// applications needs). The file's contents are wiped once parsed.
func LoadCredentials(path string) (*Credentials, error) {
	data, err := secretfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("socks5 credentials: %w", err) // names path
	}
	defer clear(data)
	c, err := ParseCredentials(data)
	if err != nil {
		return nil, fmt.Errorf("socks5 credentials: %s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials parses one username:password per line. The
// username ends at the first ':', the password is the rest of the line
// (a trailing '\r' removed); both are 1..255 bytes, as RFC 1929 allows,
// and a username appears once. Blank lines and lines starting with '#' are
// ignored. At least one pair is required. Errors name the line, never a
// password.
func ParseCredentials(data []byte) (*Credentials, error) {
	c := &Credentials{users: map[string][]byte{}}
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 || line[0] == '#' {
			continue
		}
		user, pass, ok := bytes.Cut(line, []byte(":"))
		switch {
		case !ok:
			return nil, fmt.Errorf("line %d: expected username:password", i+1)
		case len(user) == 0 || len(user) > 255:
			return nil, fmt.Errorf("line %d: username of %d bytes (1..255)", i+1, len(user))
		case len(pass) == 0 || len(pass) > 255:
			return nil, fmt.Errorf("line %d: password of %d bytes (1..255)", i+1, len(pass))
		}
		if _, dup := c.users[string(user)]; dup {
			return nil, fmt.Errorf("line %d: duplicate username %q", i+1, user)
		}
		c.users[string(user)] = bytes.Clone(pass)
	}
	if len(c.users) == 0 {
		return nil, errors.New("no username:password line")
	}
	return c, nil
}

// Len returns the number of users.
func (c *Credentials) Len() int { return len(c.users) }

// String names the users' count, never a password.
func (c *Credentials) String() string {
	return fmt.Sprintf("Credentials(%d users)", len(c.users))
}

// check reports whether user and pass are one of the pairs. The password
// comparison takes the same time for every password of a given length,
// and an unknown user costs a comparison too.
func (c *Credentials) check(user, pass []byte) bool {
	want, ok := c.users[string(user)]
	if !ok {
		want = pass
	}
	return subtle.ConstantTimeCompare(want, pass) == 1 && ok
}

// socksAuthenticate runs the RFC 1929 subnegotiation after the server chose
// the username/password method: VER ULEN UNAME PLEN PASSWD, answered with
// VER STATUS. A wrong pair is answered with a failure status and returns
// an error wrapping errSocksAuth; the caller then closes the connection.
func socksAuthenticate(rw io.ReadWriter, creds *Credentials) error {
	var hdr [2]byte
	if _, err := io.ReadFull(rw, hdr[:]); err != nil {
		return fmt.Errorf("socks5: authentication: %w", err)
	}
	if hdr[0] != socksAuthVersion {
		return fmt.Errorf("%w: authentication version %d", errSocksProtocol, hdr[0])
	}
	user := make([]byte, hdr[1])
	if _, err := io.ReadFull(rw, user); err != nil {
		return fmt.Errorf("socks5: authentication username: %w", err)
	}
	var plen [1]byte
	if _, err := io.ReadFull(rw, plen[:]); err != nil {
		return fmt.Errorf("socks5: authentication password length: %w", err)
	}
	pass := make([]byte, plen[0])
	if _, err := io.ReadFull(rw, pass); err != nil {
		return fmt.Errorf("socks5: authentication password: %w", err)
	}
	if !creds.check(user, pass) {
		rw.Write([]byte{socksAuthVersion, socksAuthFailed})
		return fmt.Errorf("%w: wrong username or password (user %q)", errSocksAuth, user)
	}
	_, err := rw.Write([]byte{socksAuthVersion, socksAuthOK})
	return err
}
