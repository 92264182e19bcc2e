package keys

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"golang.org/x/crypto/curve25519"
)

// Len is the length in bytes of a WireGuard (Curve25519) key.
const Len = 32

// Public is a WireGuard public key. It prints as standard base64, as `wg`
// prints it.
type Public [Len]byte

// Private is a WireGuard private key. It never prints itself (redact.go):
// Reveal and Hex are the only ways to its text.
type Private [Len]byte

// ParsePublic decodes a public key written as standard base64, the way
// `wg pubkey` prints it. Surrounding white space is ignored.
func ParsePublic(s string) (Public, error) {
	b, err := parse(s)
	return Public(b), err
}

// ParsePrivate decodes a private key written as standard base64, as
// `wg genkey` prints it. Surrounding white space (such as the newline at
// the end of a key file) is ignored. Its errors never quote the input.
func ParsePrivate(s string) (Private, error) {
	b, err := parse(s)
	k := Private(b)
	clear(b[:])
	return k, err
}

// parse decodes a base64 key. Its errors name the problem (bad base64,
// wrong length) but never the input, which may be a private key.
func parse(s string) ([Len]byte, error) {
	var k [Len]byte
	s = strings.TrimSpace(s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return k, fmt.Errorf("key is not valid base64: %w", err)
	}
	if len(b) != Len {
		clear(b)
		return k, fmt.Errorf("key has %d bytes, want %d", len(b), Len)
	}
	copy(k[:], b)
	clear(b)
	return k, nil
}

// Generate returns a new private key read from r and clamped, as
// `wg genkey` makes it. r should be a cryptographic source; tests may
// pass a seeded one.
func Generate(r io.Reader) (Private, error) {
	var k Private
	if _, err := io.ReadFull(r, k[:]); err != nil {
		clear(k[:])
		return Private{}, err
	}
	clamp((*[Len]byte)(&k))
	return k, nil
}

// NewPrivate returns a new private key from crypto/rand, clamped.
func NewPrivate() (Private, error) { return Generate(rand.Reader) }

// clamp applies the Curve25519 scalar clamping (RFC 7748, section 5) that
// wg applies to generated keys.
func clamp(k *[Len]byte) {
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
}

// String returns the key in standard base64, as `wg` prints it.
func (k Public) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

// Hex returns the key in lowercase hex, as the WireGuard UAPI expects it.
func (k Public) Hex() string { return hex.EncodeToString(k[:]) }

// IsZero reports whether every byte of the key is zero (an unset key).
func (k Public) IsZero() bool { return k == Public{} }

// IsZero reports whether every byte of the key is zero (an unset key).
func (k Private) IsZero() bool { return k == Private{} }

// PublicKey derives the public key of k. Like wg, it clamps the scalar
// first (curve25519.X25519 would clamp it anyway); k itself is unchanged.
func (k Private) PublicKey() Public {
	priv := [Len]byte(k)
	clamp(&priv)
	pub, err := curve25519.X25519(priv[:], curve25519.Basepoint)
	clear(priv[:])
	if err != nil {
		// X25519 only fails when the result is the all-zero point, which
		// cannot happen with the base point and a clamped scalar.
		panic(fmt.Sprintf("keys: X25519 with the base point failed: %v", err))
	}
	return Public(pub)
}

// Reveal returns the key in standard base64, as `wg genkey` prints it. Use
// it only to write the key where it belongs, never into a log.
func (k Private) Reveal() string { return base64.StdEncoding.EncodeToString(k[:]) }

// Hex returns the key in lowercase hex, as the WireGuard UAPI expects it.
// Like Reveal, its result must not be logged.
func (k Private) Hex() string { return hex.EncodeToString(k[:]) }
