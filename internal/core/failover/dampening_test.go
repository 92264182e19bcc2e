package failover

import (
	"math"
	"testing"
	"time"
)

// flapper cuts path "direct" of peer "b" every period (down at k*period, up
// again half a period later) with "consumer" always up as the alternative.
type flapper struct {
	sel    *Selector
	period time.Duration
}

func newFlapper(period time.Duration) *flapper {
	f := &flapper{sel: New(DefaultSettings()), period: period}
	f.sel.SetPeer("b", []PathSpec{{Name: "direct"}, {Name: "consumer"}}, DefaultSettings())
	f.sel.Observe("b", "direct", Observation{Up: true, SRTT: 10 * time.Millisecond}, t0.Add(-time.Minute))
	f.sel.Observe("b", "consumer", Observation{Up: true, SRTT: 30 * time.Millisecond}, t0.Add(-time.Minute))
	f.sel.Tick(t0.Add(-time.Minute))
	return f
}

// flap runs the k-th cut (k from 1) and returns the state right after the
// down transition's Tick.
func (f *flapper) flap(k int) State {
	down := t0.Add(time.Duration(k-1) * f.period)
	f.sel.Observe("b", "direct", Observation{Up: false}, down)
	f.sel.Tick(down)
	st := f.sel.PathState("b", "direct")
	up := down.Add(f.period / 2)
	f.sel.Observe("b", "direct", Observation{Up: true, SRTT: 10 * time.Millisecond}, up)
	f.sel.Tick(up)
	return st
}

func TestDampeningEvery10sNeverSuppressed(t *testing.T) {
	f := newFlapper(10 * time.Second)
	for k := 1; k <= 500; k++ {
		if st := f.flap(k); st == Dampened {
			t.Fatalf("suppressed at flap %d", k)
		}
	}
	// The figure converges to 1000 / (1 - 2^(-10/15)) = 2701.
	f.sel.Observe("b", "direct", Observation{}, t0.Add(500*10*time.Second)) // the 501st down
	info, _ := f.sel.PathInfo("b", "direct")
	if want := 1000 / (1 - math.Exp2(-10.0/15)); math.Abs(info.Penalty-want) > 1 {
		t.Fatalf("steady penalty %.1f, want %.1f", info.Penalty, want)
	}
}

func TestDampeningEvery5sSuppressedBySixthFlap(t *testing.T) {
	f := newFlapper(5 * time.Second)
	for k := 1; k <= 5; k++ {
		if st := f.flap(k); st == Dampened {
			t.Fatalf("suppressed at flap %d, want not before the 6th", k)
		}
	}
	if st := f.flap(6); st != Dampened {
		info, _ := f.sel.PathInfo("b", "direct")
		t.Fatalf("after the 6th flap: %v (penalty %.0f), want dampened", st, info.Penalty)
	}
	// The 6th down was at 25s, the figure then was
	// 1000 * (1 - r^6) / (1 - r) with r = 2^(-5/15).
	r := math.Exp2(-5.0 / 15)
	peak := 1000 * (1 - math.Pow(r, 6)) / (1 - r)
	// The path came back up at 27.5s but stays out of use until the figure
	// decays below 1500: 15s * log2(peak/1500) after 25s.
	reuse := t0.Add(25*time.Second + time.Duration(15*math.Log2(peak/1500)*float64(time.Second)))
	if got := f.sel.NextDeadline(); got.Sub(reuse).Abs() > time.Millisecond {
		t.Fatalf("NextDeadline %v, want reuse at %v", got.Sub(t0), reuse.Sub(t0))
	}
	if p, _ := f.sel.Active("b"); p != "consumer" {
		t.Fatalf("active %q while direct is dampened", p)
	}
	f.sel.Tick(reuse.Add(-10 * time.Millisecond))
	if st := f.sel.PathState("b", "direct"); st != Dampened {
		t.Fatalf("just before reuse: %v", st)
	}
	f.sel.Tick(reuse.Add(10 * time.Millisecond))
	if st := f.sel.PathState("b", "direct"); st != Up {
		t.Fatalf("just after reuse: %v", st)
	}
	// Usable again, up for far more than the failback hold, better: it wins
	// after the better hold, as a failback (we left it when it went down).
	evs := f.sel.Tick(reuse.Add(10*time.Millisecond + DefaultBetterHold))
	if len(evs) != 1 || evs[0].To != "direct" || evs[0].Reason != ReasonFailback {
		t.Fatalf("after reuse + hold: %v", evs)
	}
}

func TestDampeningPenaltyCeiling(t *testing.T) {
	var m merit
	d := DefaultSettings().Dampening
	for range 1000 {
		m.flap(d, t0)
	}
	if want := d.Reuse * 16; m.value != want {
		t.Fatalf("penalty %v, want ceiling %v", m.value, want)
	}
	// Reused 4 half-lives later.
	if got := m.reuseAt(d).Sub(t0); got.Round(time.Millisecond) != 4*d.HalfLife {
		t.Fatalf("reuse after %v, want %v", got, 4*d.HalfLife)
	}
}
