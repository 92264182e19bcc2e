package health

import (
	"slices"
	"testing"
	"time"
)

// StatsChanged names each new path once, then only the paths whose loss,
// lost count or outlier count an outcome moved: a loss, the answers that
// follow it (the loss falls), an outlier; not an ordinary answer on a
// path without losses, and never a removed path.
func TestStatsChanged(t *testing.T) {
	r := &statsRig{t: t, m: newTestMonitor(11), now: t0}
	m := r.m
	m.SetPath(pa, Settings{})
	m.SetPath(pb, Settings{})
	if got := m.StatsChanged(nil); !slices.Equal(sorted(got), []PathID{pa, pb}) {
		t.Fatalf("after SetPath: %v, want both paths", got)
	}
	if got := m.StatsChanged(nil); len(got) != 0 {
		t.Fatalf("nothing happened: %v", got)
	}
	m.Due(r.now, nil) // sending alone changes nothing
	if got := m.StatsChanged(nil); len(got) != 0 {
		t.Fatalf("after sending: %v", got)
	}
	// pa comes up on answers to later probes: the one sent at t0, still
	// unanswered, is counted lost then (forgetOutage), and that is a change.
	for st, _ := m.Stats(pa); st.State != Up; st, _ = m.Stats(pa) {
		r.answer(pa, time.Millisecond)
	}
	if st, _ := m.Stats(pa); st.ProbesLost != 1 || st.Loss != 0 {
		t.Fatalf("setup: pa up with %d lost, loss %v; want the t0 probe lost outside the window", st.ProbesLost, st.Loss)
	}
	if got := m.StatsChanged(nil); !slices.Contains(got, pa) {
		t.Fatalf("the probe counted lost when pa came up was not reported: %v", got)
	}
	for range 5 {
		r.answer(pa, time.Millisecond)
		if got := m.StatsChanged(nil); slices.Contains(got, pa) {
			t.Fatalf("an answer that moved neither loss nor outliers reported pa: %v", got)
		}
	}
	r.loseNext(pa)
	if got := m.StatsChanged(nil); !slices.Contains(got, pa) {
		t.Fatalf("after pa's loss: %v, want pa in it", got)
	}
	before, _ := m.Stats(pa)
	r.answer(pa, time.Millisecond)
	after, _ := m.Stats(pa)
	if after.Loss >= before.Loss {
		t.Fatalf("setup: loss %v after an answer, was %v", after.Loss, before.Loss)
	}
	if got := m.StatsChanged(nil); !slices.Contains(got, pa) {
		t.Fatalf("the answer after a loss lowered the loss but was not reported: %v", got)
	}
	// An outlier (far above the recent median) is clipped and counted.
	for range medianSamples {
		r.answer(pa, time.Millisecond)
	}
	m.StatsChanged(nil)
	r.answer(pa, 500*time.Millisecond)
	if st, _ := m.Stats(pa); st.RTTOutliers == 0 {
		t.Fatal("setup: the 500 ms answer was not an outlier")
	}
	if got := m.StatsChanged(nil); !slices.Contains(got, pa) {
		t.Fatalf("after an outlier: %v, want pa in it", got)
	}
	probeOf(t, m, pb, r.now) // pb loses probes; then it goes
	for range 10 {
		r.now = m.NextDeadline()
		m.Tick(r.now, nil)
		m.Due(r.now, nil)
	}
	m.RemovePath(pb)
	if got := m.StatsChanged(nil); slices.Contains(got, pb) {
		t.Fatalf("removed path reported: %v", got)
	}
}

// statsRig drives a Monitor through TestStatsChanged's scenario, with its
// own clock.
type statsRig struct {
	t   *testing.T
	m   *Monitor
	now time.Time
}

// answer runs the monitor until it probes id and answers that probe rtt
// later.
func (r *statsRig) answer(id PathID, rtt time.Duration) {
	r.t.Helper()
	var p Probe
	p, r.now = probeOf(r.t, r.m, id, r.now)
	if _, ok := r.m.OnReply(id, p.Nonce, r.now.Add(rtt)); !ok {
		r.t.Fatalf("answer to %v not matched", id)
	}
	r.now = r.now.Add(rtt)
}

// loseNext lets id's next probe expire unanswered: a loss.
func (r *statsRig) loseNext(id PathID) {
	r.t.Helper()
	probeOf(r.t, r.m, id, r.now)
	lost0, _ := r.m.Stats(id)
	for range 1000 {
		r.now = r.m.NextDeadline()
		r.m.Due(r.now, nil)
		r.m.Tick(r.now, nil)
		if st, _ := r.m.Stats(id); st.ProbesLost > lost0.ProbesLost {
			return
		}
	}
	r.t.Fatalf("setup: %v lost no probe", id)
}

// probeOf runs m from now until it sends a probe on id, and returns that
// probe and when it was sent.
func probeOf(t *testing.T, m *Monitor, id PathID, now time.Time) (Probe, time.Time) {
	t.Helper()
	for range 10000 {
		for _, p := range m.Due(now, nil) {
			if p.ID == id {
				return p, now
			}
		}
		m.Tick(now, nil)
		if next := m.NextDeadline(); next.After(now) {
			now = next
		} else {
			now = now.Add(time.Millisecond)
		}
	}
	t.Fatalf("no probe on %v", id)
	return Probe{}, now
}

func sorted(ids []PathID) []PathID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(x, y PathID) int { return x.Path - y.Path })
	return out
}
