package health

import (
	"testing"
	"time"
)

var pb = PathID{Peer: "b", Path: 1}

// idleTwoPaths returns a monitor with peer b's paths pa (active) and pb
// (standby) up at t0 and b marked idle, and the time it got there.
func idleTwoPaths(t *testing.T) (*Monitor, time.Time) {
	t.Helper()
	m := newTestMonitor(7)
	m.SetPath(pa, Settings{})
	m.SetPath(pb, Settings{})
	m.SetActive(pa, true)
	for _, p := range m.Due(t0, nil) {
		m.OnReply(p.ID, p.Nonce, t0)
	}
	if tr := m.Tick(t0, nil); len(tr) != 2 {
		t.Fatalf("setup: transitions %+v, want both paths up", tr)
	}
	m.SetIdle("b", true)
	return m, t0
}

// run drives m from start to end, answering every probe on a path for
// which answer reports true (at once), and returns the probes sent per
// path and the transitions.
func run(m *Monitor, start, end time.Time, answer func(PathID, time.Time) bool) (map[PathID]int, []Transition) {
	sent := map[PathID]int{}
	var trans []Transition
	for now := start; now.Before(end); now = m.NextDeadline() {
		for _, p := range m.Due(now, nil) {
			sent[p.ID]++
			if answer(p.ID, now) {
				m.OnReply(p.ID, p.Nonce, now)
			}
		}
		trans = append(trans, m.Tick(now, nil)...)
	}
	return sent, trans
}

// Every up path of an idle peer, active and standby, is probed at
// idlePeerSlowdown x IdleInterval, and stays up while it answers.
func TestIdlePeerUpPathsProbedSlowly(t *testing.T) {
	m, start := idleTwoPaths(t)
	const span = 20 * time.Second
	sent, trans := run(m, start, start.Add(span), func(PathID, time.Time) bool { return true })
	if len(trans) != 0 {
		t.Fatalf("transitions %+v on answering paths", trans)
	}
	slow := DefaultIdleInterval * idlePeerSlowdown
	// The schedule takes up to a quarter off each interval (jitter); one
	// probe more for the one scheduled before the peer turned idle.
	most := int(span/(slow-slow/scheduleJitterDiv)) + 2
	for _, id := range []PathID{pa, pb} {
		if sent[id] < int(span/slow) || sent[id] > most {
			t.Errorf("path %v: %d probes in %v, want %d..%d (every %v)", id, sent[id], span, int(span/slow), most, slow)
		}
	}
}

// A dead path of an idle peer goes down DetectMultiplier x the slow
// interval after its last answer at the latest; down, it is probed every
// IdleInterval again, so it comes back up as fast as a busy peer's path.
func TestIdlePeerDeadPathDetectedAndRestored(t *testing.T) {
	m, start := idleTwoPaths(t)
	cut := start.Add(10 * time.Second)
	_, trans := run(m, start, cut.Add(8*time.Second), func(id PathID, now time.Time) bool { return id != pb || now.Before(cut) })
	if len(trans) != 1 || trans[0].ID != pb || trans[0].Up {
		t.Fatalf("transitions %+v, want pb down", trans)
	}
	detect := DefaultDetectMultiplier * DefaultIdleInterval * idlePeerSlowdown
	if trans[0].At.After(cut.Add(detect)) {
		t.Fatalf("pb down at %v after the cut, want within %v", trans[0].At.Sub(cut), detect)
	}
	restore := cut.Add(8 * time.Second)
	sent, trans := run(m, restore, restore.Add(3*time.Second), func(PathID, time.Time) bool { return true })
	if len(trans) != 1 || !trans[0].Up || trans[0].At.After(restore.Add(DefaultUpThreshold*DefaultIdleInterval)) {
		t.Fatalf("after the repair: transitions %+v, want pb up within %v", trans, DefaultUpThreshold*DefaultIdleInterval)
	}
	if sent[pb] < DefaultUpThreshold {
		t.Fatalf("down path probed %d times in 3 s", sent[pb])
	}
}

// A peer turned busy has every path probed at the next Due, standby paths
// included, so a failover lands on a path whose state is fresh.
func TestIdlePeerTurnedBusyProbesEveryPath(t *testing.T) {
	m, start := idleTwoPaths(t)
	run(m, start, start.Add(5*time.Second), func(PathID, time.Time) bool { return true })
	now := start.Add(5 * time.Second).Add(time.Millisecond)
	m.SetIdle("b", false)
	got := map[PathID]bool{}
	for _, p := range m.Due(now, nil) {
		got[p.ID] = true
	}
	if !got[pa] || !got[pb] {
		t.Fatalf("turned busy: probes %v, want both paths at once", got)
	}
}
