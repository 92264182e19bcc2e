package admin

import (
	"testing"
	"time"
)

// TestPingLimiter steps the /ping limiter through fake time: a burst, then
// one per interval, never more than the burst after a long pause, a
// refusal spends nothing, and a clock that goes backwards grants nothing.
func TestPingLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newPingLimiter(3, time.Second)
	type step struct {
		at   time.Duration
		ok   bool
		wait time.Duration
	}
	for i, s := range []step{
		{0, true, 0}, {0, true, 0}, {0, true, 0}, // the burst
		{0, false, time.Second},
		{400 * time.Millisecond, false, 600 * time.Millisecond},
		{time.Second, true, 0}, // one token back after an interval
		{time.Second, false, time.Second},
		{500 * time.Millisecond, false, time.Second},                     // backwards: nothing gained
		{time.Hour, true, 0}, {time.Hour, true, 0}, {time.Hour, true, 0}, // refilled to the burst only
		{time.Hour, false, time.Second},
	} {
		ok, wait := b.take(t0.Add(s.at))
		if ok != s.ok || wait != s.wait {
			t.Fatalf("step %d (at %v): take = %v, %v; want %v, %v", i, s.at, ok, wait, s.ok, s.wait)
		}
	}
}
