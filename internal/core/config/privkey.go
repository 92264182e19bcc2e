package config

import (
	"fmt"
	"log/slog"

	"github.com/liqo-relay/relay/internal/core/health"
)

// PrivateKey is a relay's WireGuard private key. It never prints itself:
// fmt (every verb, %v, %+v, %#v, %s, %x, %q…), slog, encoding/json and
// YAML all show Redacted instead, also when the key sits inside a larger
// value such as a Config. Reveal and Hex are the only ways to the key
// material in text, for the key file and the WireGuard UAPI.
type PrivateKey [KeyLen]byte

// Redacted is how a PrivateKey prints, as health.PrivateKey does.
const Redacted = health.Redacted

// ParsePrivateKey decodes a private key written as standard base64, as
// `wg genkey` prints it; surrounding white space is ignored. Its errors
// never quote the input.
func ParsePrivateKey(s string) (PrivateKey, error) {
	k, err := ParseKey(s)
	return PrivateKey(k), err
}

// IsZero reports whether every byte of the key is zero (an unset key).
func (k PrivateKey) IsZero() bool { return k == PrivateKey{} }

// PublicKey derives the public key of k.
func (k PrivateKey) PublicKey() Key { return Key(k).PublicKey() }

// Reveal returns the key in standard base64, as `wg genkey` prints it. Use
// it only to write the key where it belongs, never into a log.
func (k PrivateKey) Reveal() string { return Key(k).String() }

// Hex returns the key in lowercase hex, as the WireGuard UAPI expects it.
// Like Reveal, its result must not be logged.
func (k PrivateKey) Hex() string { return Key(k).Hex() }

// String returns Redacted.
func (k PrivateKey) String() string { return Redacted }

// GoString returns a redacted Go syntax form, for %#v.
func (k PrivateKey) GoString() string { return "config.PrivateKey(" + Redacted + ")" }

// Format prints Redacted for every verb and flag, so that neither %x nor
// %d nor %v of a containing struct shows the bytes.
func (k PrivateKey) Format(f fmt.State, verb rune) {
	health.FormatRedacted(f, verb, k.GoString())
}

// LogValue makes slog print Redacted.
func (k PrivateKey) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalText makes encoding/json, YAML and any other text encoder write
// Redacted. There is deliberately no UnmarshalText: keys are read with
// ParsePrivateKey.
func (k PrivateKey) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

var (
	_ fmt.Formatter  = PrivateKey{}
	_ fmt.Stringer   = PrivateKey{}
	_ fmt.GoStringer = PrivateKey{}
	_ slog.LogValuer = PrivateKey{}
)
