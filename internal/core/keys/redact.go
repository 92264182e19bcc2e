package keys

import (
	"fmt"
	"log/slog"
)

// Redacted is how a Private prints.
const Redacted = "[redacted]"

// String returns Redacted.
func (k Private) String() string { return Redacted }

// GoString returns a redacted Go syntax form, for %#v.
func (k Private) GoString() string { return "keys.Private(" + Redacted + ")" }

// Format prints Redacted for every verb and flag, so that neither %x nor
// %d nor %v of a containing struct shows the bytes; %q quotes it and %#v
// is GoString. One fmt path never calls it: a verb that does not fit a
// pointer (%s, %q) met inside a container, as in %s of []*Config, makes
// fmt explain the mistake by printing the pointed-to value without
// consulting any method, so that output shows the bytes. Print such
// values with %v.
func (k Private) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = f.Write([]byte(k.GoString()))
	case verb == 'q':
		_, _ = f.Write([]byte(`"` + Redacted + `"`))
	default:
		_, _ = f.Write([]byte(Redacted))
	}
}

// LogValue makes slog print Redacted.
func (k Private) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalText makes encoding/json, YAML and any other text encoder write
// Redacted. There is deliberately no UnmarshalText: keys are read with
// ParsePrivate.
func (k Private) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

var (
	_ fmt.Formatter  = Private{}
	_ fmt.Stringer   = Private{}
	_ fmt.GoStringer = Private{}
	_ slog.LogValuer = Private{}
)
