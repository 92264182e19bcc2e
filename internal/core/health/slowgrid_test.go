package health

import (
	"testing"
	"time"
)

// The up paths of idle peers are probed on the slow grid: every probe time
// a multiple of slowGrid, so that many idle paths share few wakes; a busy
// peer's paths stay on the fine grid.
func TestIdlePeersShareSlowGridWakes(t *testing.T) {
	m := newTestMonitor(11)
	const n = 200
	for i := range n {
		id := PathID{Peer: "b", Path: i}
		m.SetPath(id, Settings{})
	}
	for _, p := range m.Due(t0, nil) {
		m.OnReply(p.ID, p.Nonce, t0)
	}
	m.Tick(t0, nil)
	m.SetIdle("b", true)
	start := t0.Add(2 * time.Second) // the probes scheduled before SetIdle have gone
	span := 20 * time.Second
	wakes, probes := 0, 0
	next := func(now time.Time) time.Time { return later(m.NextDeadline(), now) } // asap is now
	for now := next(t0); now.Before(start.Add(span)); now = next(now) {
		ps := m.Due(now, nil)
		for _, p := range ps {
			m.OnReply(p.ID, p.Nonce, now)
		}
		if tr := m.Tick(now, nil); len(tr) != 0 {
			t.Fatalf("transitions %+v on answering paths", tr)
		}
		if now.Before(start) || len(ps) == 0 {
			continue
		}
		wakes++
		probes += len(ps)
		if now.Sub(now.Truncate(slowGrid)) != 0 {
			t.Fatalf("idle probe wake at %v, off the %v grid", now.Sub(t0), slowGrid)
		}
	}
	slow := DefaultIdleInterval * idlePeerSlowdown
	if max := int(span/slowGrid) + 1; wakes > max || probes < n*int(span/slow) {
		t.Fatalf("%d probes in %d wakes over %v; want at least %d probes in at most %d wakes", probes, wakes, span, n*int(span/slow), max)
	}

	// Busy again: the fine grid.
	m.SetIdle("b", false)
	fine := false
	for now := next(start.Add(span)); now.Before(start.Add(span + 2*time.Second)); now = next(now) {
		if len(m.Due(now, nil)) > 0 && now.Sub(now.Truncate(slowGrid)) != 0 {
			fine = true
		}
		m.Tick(now, nil)
	}
	if !fine {
		t.Fatal("a busy peer's probes stayed on the slow grid")
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
