package failover

import (
	"testing"
	"time"
)

// Step tables: each case is a script (see script_test.go) with the expected
// output inline.
var stepTests = []struct {
	name, script string
}{
	{"initial choice is the lowest cost up path", `
peer b direct consumer=5ms
at 0s
obs b consumer up 6ms   # cost 6+5 = 11ms < 12ms
obs b direct up 12ms
tick
= b - -> consumer (initial)
active b
= consumer
`},
	{"initial waits for a path", `
peer b direct consumer
tick
active b
= unreachable
at 1s
obs b direct up 10ms
tick
= b - -> direct (initial)
`},
	{"down switches at once", `
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
at 5s
obs b direct down
tick
= b direct -> consumer (down)
state b direct
= down penalty=1000
`},
	{"challenger inside the absolute margin never wins", `
peer b direct consumer
obs b direct up 12ms
tick
= b - -> direct (initial)
obs b consumer up 10ms  # 2ms better: not MORE than 2ms
after 10s
tick
after 50s
tick
active b
= direct
`},
	{"challenger inside the relative margin never wins", `
peer b direct consumer
obs b direct up 100ms
tick
= b - -> direct (initial)
obs b consumer up 91ms  # 9ms better, but 9% < 10%
after 60s
tick
active b
= direct
`},
	{"better outside both margins wins after the hold", `
peer b direct consumer
obs b direct up 100ms
tick
= b - -> direct (initial)
at 1s
obs b consumer up 89ms  # 11ms and 11% better
tick
deadline
= 3s
at 2.999s
tick
at 3s
tick
= b direct -> consumer (better)
`},
	{"better but not sustained does not win", `
peer b direct consumer
obs b direct up 100ms
tick
= b - -> direct (initial)
at 1s
obs b consumer up 80ms
tick
at 2.5s
obs b consumer up 95ms   # back inside the margin: the hold restarts
tick
at 2.6s
obs b consumer up 80ms
tick
at 4.5s                  # 2s after 1s, but only 1.9s after 2.6s
tick
at 4.6s
tick
= b direct -> consumer (better)
`},
	{"loss counts in the cost", `
peer b direct consumer
obs b direct up 10ms 0.1  # cost 10 + 200*0.1 = 30ms
obs b consumer up 25ms    # cost 25ms: 5ms and 16% better
tick
= b - -> consumer (initial)
`},
	{"failback waits for the failback hold", `
set nodampening
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
at 1s
obs b direct down
tick
= b direct -> consumer (down)
at 2s
obs b direct up 10ms
tick
at 4s        # better for 2s, but up for only 2s
tick
at 4.999s
tick
at 5s
tick
= b consumer -> direct (failback)
`},
	{"failback is not granted while the path flaps", `
set nodampening
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
at 1s
obs b direct down
tick
= b direct -> consumer (down)
at 2s
obs b direct up 10ms
at 4.5s
obs b direct down
tick
at 5s
obs b direct up 10ms
tick
at 7.9s
tick
at 8s
tick
= b consumer -> direct (failback)
`},
	{"all down and recovery", `
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
at 1s
obs b direct down
obs b consumer down
tick
= b direct -> - (all-down)
active b
= unreachable
at 2s
obs b consumer up 30ms
tick
= b - -> consumer (recovered)
`},
	{"path list change at runtime", `
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
peer b consumer backup=1ms    # direct removed, backup added
tick
= b direct -> consumer (removed)
state b consumer
= up penalty=0
state b backup
= down penalty=0
obs b backup up 5ms
at 3s
tick
= b consumer -> backup (better)
peer b other
tick
= b backup -> - (all-down)
`},
	{"dampened path is passed over", `
peer b direct consumer
obs b direct up 10ms
obs b consumer up 30ms
tick
= b - -> direct (initial)
obs b direct down
obs b direct up 10ms
obs b direct down
obs b direct up 10ms
obs b direct down
obs b direct up 10ms
obs b direct down
obs b direct up 10ms  # 4 flaps in no time: 4000 > 3500
state b direct
= dampened penalty=4000
tick
= b direct -> consumer (dampened)
`},
	{"naive follows the lowest last cost", `
set naive
peer b direct consumer
obs b direct up 10ms
obs b consumer up 11ms
tick
= b - -> direct (initial)
obs b consumer up 9.9ms
tick
= b direct -> consumer (better)
obs b direct up 9.8ms
tick
= b consumer -> direct (better)
`},
	{"peers are ticked in sorted order", `
peer c x
peer a x
peer b x
obs b x up 1ms
obs c x up 1ms
obs a x up 1ms
tick
= a - -> x (initial)
= b - -> x (initial)
= c - -> x (initial)
remove b
obs b x down
active b
= unreachable
`},
}

func TestSelectorSteps(t *testing.T) {
	for _, tt := range stepTests {
		t.Run(tt.name, func(t *testing.T) { checkScript(t, tt.script) })
	}
}

// Every deadline NextDeadline reports must be acted upon by a Tick at that
// time, or it must move to the future: otherwise a shell sleeping until
// NextDeadline would spin.
func TestNextDeadlineNeverStuckInThePast(t *testing.T) {
	for _, naive := range []bool{false, true} {
		s := DefaultSettings()
		if naive {
			s.Selector = SelectorNaive
		}
		sel := New(s)
		sel.SetPeer("b", []PathSpec{{Name: "direct"}, {Name: "consumer"}}, s)
		now := t0
		sel.Observe("b", "direct", Observation{Up: true, SRTT: 50 * time.Millisecond}, now)
		sel.Tick(now)
		sel.Observe("b", "consumer", Observation{Up: true, SRTT: 10 * time.Millisecond}, now)
		for range 10 {
			sel.Tick(now)
			d := sel.NextDeadline()
			if d.IsZero() {
				break
			}
			if !d.After(now) {
				t.Fatalf("naive=%v: NextDeadline %v not after now %v after a Tick", naive, d.Sub(t0), now.Sub(t0))
			}
			now = d
		}
		if p, _ := sel.Active("b"); p != "consumer" {
			t.Fatalf("naive=%v: active %q, want consumer", naive, p)
		}
	}
}

func TestSetPeerZeroSettingsUseSelectorDefaults(t *testing.T) {
	s := DefaultSettings()
	s.Selector = SelectorNaive
	sel := New(s)
	sel.SetPeer("b", []PathSpec{{Name: "x"}, {Name: "y"}}, Settings{})
	sel.Observe("b", "x", Observation{Up: true, SRTT: 10 * time.Millisecond}, t0)
	sel.Tick(t0)
	sel.Observe("b", "y", Observation{Up: true, SRTT: 9 * time.Millisecond}, t0)
	if evs := sel.Tick(t0); len(evs) != 1 || evs[0].Reason != ReasonBetter {
		t.Fatalf("events %v: the peer must use New's (naive) settings", evs)
	}
}

// TestNaiveFollowsLastSample: the naive baseline switches on the latest
// sample even when the smoothed RTTs say the active path is better, and
// ignores loss; the default selector does neither.
func TestNaiveFollowsLastSample(t *testing.T) {
	for _, naive := range []bool{false, true} {
		s := DefaultSettings()
		if naive {
			s.Selector = SelectorNaive
		}
		sel := New(s)
		sel.SetPeer("b", []PathSpec{{Name: "x"}, {Name: "y"}}, Settings{})
		sel.Observe("b", "x", Observation{Up: true, SRTT: 10 * time.Millisecond, LastRTT: 10 * time.Millisecond}, t0)
		sel.Observe("b", "y", Observation{Up: true, SRTT: 30 * time.Millisecond, LastRTT: 30 * time.Millisecond}, t0)
		sel.Tick(t0)
		// One fast sample on y, one slow on x: smoothed, x is still better.
		t1 := t0.Add(100 * time.Millisecond)
		sel.Observe("b", "y", Observation{Up: true, SRTT: 28 * time.Millisecond, LastRTT: 5 * time.Millisecond, Loss: 0.5}, t1)
		sel.Observe("b", "x", Observation{Up: true, SRTT: 12 * time.Millisecond, LastRTT: 25 * time.Millisecond}, t1)
		sel.Tick(t1)
		got, _ := sel.Active("b")
		want := "x"
		if naive {
			want = "y"
		}
		if got != want {
			t.Errorf("naive=%v: active %q, want %q", naive, got, want)
		}
	}
}
