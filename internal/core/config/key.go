package config

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/crypto/curve25519"
)

// KeyLen is the length in bytes of a WireGuard (Curve25519) key.
const KeyLen = 32

// Key is a WireGuard private or public key.
type Key [KeyLen]byte

// ParseKey decodes a key written as standard base64, the way `wg genkey` and
// `wg pubkey` print it. Surrounding white space (such as the newline at the
// end of a key file) is ignored.
func ParseKey(s string) (Key, error) {
	var k Key
	s = strings.TrimSpace(s)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return k, fmt.Errorf("key is not valid base64: %w", err)
	}
	if len(b) != KeyLen {
		return k, fmt.Errorf("key has %d bytes, want %d", len(b), KeyLen)
	}
	copy(k[:], b)
	return k, nil
}

// String returns the key in standard base64, as `wg` prints it.
func (k Key) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

// Hex returns the key in lowercase hex, as the WireGuard UAPI expects it.
func (k Key) Hex() string { return hex.EncodeToString(k[:]) }

// IsZero reports whether every byte of the key is zero (an unset key).
func (k Key) IsZero() bool { return k == Key{} }

// PublicKey derives the public key of the private key k. Like wg, it clamps
// the scalar first (curve25519.X25519 would clamp it anyway).
func (k Key) PublicKey() Key {
	priv := k
	priv[0] &= 248
	priv[31] = (priv[31] & 127) | 64
	pub, err := curve25519.X25519(priv[:], curve25519.Basepoint)
	if err != nil {
		// X25519 only fails when the result is the all-zero point, which
		// cannot happen with the base point and a clamped scalar.
		panic(fmt.Sprintf("config: X25519 with the base point failed: %v", err))
	}
	var out Key
	copy(out[:], pub)
	return out
}
