package status_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

func TestTimeJSON(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Time{}, `""`},
		{time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), `"2026-11-30T02:00:00Z"`},
		{time.Date(2026, 11, 30, 3, 0, 0, 250e6, berlin), `"2026-11-30T02:00:00.25Z"`},
	} {
		b, err := json.Marshal(status.At(tc.in))
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
		var back status.Time
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(tc.in) {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, tc.in)
		}
	}
	for _, bad := range []string{`"yesterday"`, `12`, `"2026-11-30"`} {
		var v status.Time
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

// FuzzTimeJSON: whatever a relay sends, decoding never panics, and a
// decoded time survives a round trip.
func FuzzTimeJSON(f *testing.F) {
	for _, s := range []string{`""`, `"2026-11-30T02:00:00Z"`, `"2026-11-30T02:00:00.123456789+05:30"`, `null`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v status.Time
		if json.Unmarshal(b, &v) != nil {
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			// Years outside 0..9999 cannot be formatted in RFC 3339.
			if v.Year() < 0 || v.Year() > 9999 {
				return
			}
			t.Fatalf("Marshal(%v): %v", v.Time, err)
		}
		var back status.Time
		if err := json.Unmarshal(out, &back); err != nil || !back.Equal(v.Time) {
			t.Fatalf("round trip of %s: %s -> %v, %v", b, out, back, err)
		}
	})
}
