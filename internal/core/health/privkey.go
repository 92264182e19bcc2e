package health

import (
	"fmt"
	"log/slog"
)

// Redacted is how a PrivateKey prints (config.PrivateKey prints the same).
const Redacted = "[redacted]"

// String returns Redacted.
func (k PrivateKey) String() string { return Redacted }

// GoString returns a redacted Go syntax form, for %#v.
func (k PrivateKey) GoString() string { return "health.PrivateKey(" + Redacted + ")" }

// Format prints Redacted for every verb and flag, so that neither %x nor
// %d nor %v of a containing struct shows the bytes.
func (k PrivateKey) Format(f fmt.State, verb rune) {
	FormatRedacted(f, verb, k.GoString())
}

// FormatRedacted writes Redacted for every verb and flag, and goString for
// %#v: the Format of every private key type (here and config.PrivateKey).
func FormatRedacted(f fmt.State, verb rune, goString string) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = f.Write([]byte(goString))
	case verb == 'q':
		_, _ = f.Write([]byte(`"` + Redacted + `"`))
	default:
		_, _ = f.Write([]byte(Redacted))
	}
}

// LogValue makes slog print Redacted.
func (k PrivateKey) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalText makes encoding/json and any other text encoder write
// Redacted.
func (k PrivateKey) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

var (
	_ fmt.Formatter  = PrivateKey{}
	_ fmt.Stringer   = PrivateKey{}
	_ fmt.GoStringer = PrivateKey{}
	_ slog.LogValuer = PrivateKey{}
)
