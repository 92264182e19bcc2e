package failover

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestReorderGap(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name             string
		old, new, jitter time.Duration
		want             time.Duration
	}{
		{"consumer 100 ms to direct 20 ms", 100 * ms, 20 * ms, 0, 42 * ms},
		{"jitter above the margin widens the gap", 100 * ms, 20 * ms, 5 * ms, 45 * ms},
		{"to a slower path nothing overtakes", 20 * ms, 100 * ms, 0, 0},
		{"equal paths", 50 * ms, 50 * ms, 0, 0},
		{"capped", 400 * ms, 10 * ms, 0, MaxReorderGap},
	} {
		if got := ReorderGap(c.old, c.new, c.jitter); got != c.want {
			t.Errorf("%s: ReorderGap(%v, %v, %v) = %v, want %v", c.name, c.old, c.new, c.jitter, got, c.want)
		}
	}
}

func TestFlowletSteps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	f := NewFlowlet(t0, 40*ms, FlowletHold)
	for _, s := range []struct {
		name      string
		now, last time.Duration // after t0; last < 0: never sent
		move      bool
		wait      time.Duration
	}{
		{"nothing ever sent: move at once", 1 * ms, -1, true, 0},
		{"back-to-back traffic before the deadline stays on the old path", 10 * ms, 9 * ms, false, 0},
		{"a gap of exactly Gap is a flowlet boundary", 60 * ms, 20 * ms, true, 0},
		{"a longer gap too", 300 * ms, 100 * ms, true, 0},
		{"at the deadline without a gap: move, held until last + Gap", 500 * ms, 499 * ms, true, 39 * ms},
		{"after the deadline, part of the gap already passed", 600 * ms, 570 * ms, true, 10 * ms},
	} {
		last := time.Time{}
		if s.last >= 0 {
			last = t0.Add(s.last)
		}
		move, wait := f.Step(t0.Add(s.now), last)
		if move != s.move || wait != s.wait {
			t.Errorf("%s: Step = (%v, %v), want (%v, %v)", s.name, move, wait, s.move, s.wait)
		}
	}
}

// TestFlowletHoldIsBounded drives random traffic through moves with random
// gaps and holds: a packet is never held longer than the move's gap (so
// never above MaxReorderGap), a moved packet never leaves before the last
// old-path packet plus the gap (nothing is overtaken), and the move
// happens by the deadline.
func TestFlowletHoldIsBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	for run := range 2000 {
		t0 := time.Unix(0, 0).Add(time.Duration(rng.Int64N(int64(time.Hour))))
		gap := time.Duration(rng.Int64N(int64(3 * MaxReorderGap))) // some above the cap
		hold := time.Duration(rng.Int64N(int64(2 * FlowletHold)))
		f := NewFlowlet(t0, gap, hold)
		if f.Gap > MaxReorderGap || f.Gap < 0 {
			t.Fatalf("run %d: gap %v not within [0, %v]", run, f.Gap, MaxReorderGap)
		}
		now := t0
		var last time.Time
		if rng.IntN(4) > 0 {
			last = t0.Add(-time.Duration(rng.Int64N(int64(gap) + 1)))
		}
		for {
			// Bulk traffic (sub-ms spacing) or, now and then, a pause.
			if rng.IntN(50) == 0 {
				now = now.Add(time.Duration(rng.Int64N(int64(150 * time.Millisecond))))
			} else {
				now = now.Add(time.Duration(rng.Int64N(int64(time.Millisecond))))
			}
			move, wait := f.Step(now, last)
			if wait < 0 || wait > f.Gap {
				t.Fatalf("run %d: held %v, bound %v", run, wait, f.Gap)
			}
			if !move {
				if !now.Before(f.Deadline) {
					t.Fatalf("run %d: not moved at %v, deadline %v", run, now.Sub(t0), f.Deadline.Sub(t0))
				}
				last = now // sent over the old path
				continue
			}
			if !last.IsZero() && now.Add(wait).Before(last.Add(f.Gap)) {
				t.Fatalf("run %d: moved packet leaves at %v, before the last old-path packet %v + gap %v",
					run, now.Add(wait).Sub(t0), last.Sub(t0), f.Gap)
			}
			break
		}
	}
}
