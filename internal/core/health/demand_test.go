package health

import (
	"testing"
	"time"
)

// upActive returns a monitor with pa up and active at t0.
func upActive(t *testing.T) *Monitor {
	t.Helper()
	m := newTestMonitor(3)
	m.SetPath(pa, Settings{})
	m.SetActive(pa, true)
	p := m.Due(t0, nil)
	m.OnReply(pa, p[0].Nonce, t0)
	if tr := m.Tick(t0, nil); len(tr) != 1 || !tr[0].Up {
		t.Fatalf("setup: %+v", tr)
	}
	return m
}

// Traffic within the last half interval replaces a probe; every tenth
// probe is sent anyway, and traffic older than that replaces nothing.
func TestDemandTrafficReplacesProbes(t *testing.T) {
	m := upActive(t)
	sent, replaced := 0, 0
	for range 40 {
		now := m.NextDeadline()
		for _, p := range m.Due(now, nil) {
			if m.Demand(p, now.Add(-time.Millisecond), now) {
				replaced++
				continue
			}
			sent++
			m.OnReply(p.ID, p.Nonce, now.Add(5*time.Millisecond))
		}
		m.Tick(now, nil)
	}
	st, _ := m.Stats(pa)
	if sent != 4 || replaced != 36 || st.Suppressed != 36 || st.ProbesSent != 5 || st.ProbesLost != 0 {
		t.Fatalf("sent %d, replaced %d, stats %+v: want one probe in ten sent", sent, replaced, st)
	}
	now := m.NextDeadline()
	p := m.Due(now, nil)
	if m.Demand(p[0], now.Add(-60*time.Millisecond), now) {
		t.Fatal("traffic older than half an interval replaced a probe")
	}
}

// When traffic stops on a dead path, the path goes down at the detect
// time after its last packet, exactly as after its last answer.
func TestDemandSilentPathDetected(t *testing.T) {
	m := upActive(t)
	stop := t0.Add(time.Second) // last packet
	var down []Transition
	for now := t0; now.Before(t0.Add(3 * time.Second)); now = m.NextDeadline() {
		for _, p := range m.Due(now, nil) {
			last := now.Add(-time.Millisecond)
			if last.After(stop) {
				last = stop
			}
			m.Demand(p, last, now) // probes sent after stop are never answered
		}
		down = append(down, m.Tick(now, nil)...)
	}
	if len(down) != 1 || down[0].Up || !down[0].At.Equal(stop.Add(300*time.Millisecond)) {
		t.Fatalf("transitions %+v, want down at the last packet + 300ms", down)
	}
}

// A down path's probes are never replaced: only answers bring it up.
func TestDemandNeverReplacesProbeOfDownPath(t *testing.T) {
	m := newTestMonitor(4)
	m.SetPath(pa, Settings{})
	for now := t0; now.Before(t0.Add(2 * time.Second)); now = m.NextDeadline() {
		for _, p := range m.Due(now, nil) {
			if m.Demand(p, now, now) {
				t.Fatal("probe of a down path replaced by traffic")
			}
		}
		if tr := m.Tick(now, nil); len(tr) > 0 {
			t.Fatalf("traffic alone changed the state: %+v", tr)
		}
	}
	if st, _ := m.Stats(pa); st.State != Down || st.ProbesSent < 4 {
		t.Fatalf("stats %+v", st)
	}
}

// An idle peer's active path is probed at IdleInterval; turned busy, it is
// probed at once and then every Interval, and without answers goes down a
// short detect time (300 ms) after SetIdle(false).
func TestSetIdleSlowsActivePath(t *testing.T) {
	m := upActive(t)
	m.SetIdle("b", true)
	if !m.Idle("b") {
		t.Fatal("Idle = false after SetIdle(true)")
	}
	m.Due(t0.Add(time.Millisecond), nil) // retimes
	at := m.NextDeadline()               // the probe already scheduled
	if p := m.Due(at, nil); len(p) != 1 {
		t.Fatalf("Due = %+v", p)
	}
	if d := m.NextDeadline().Sub(at); d < 370*time.Millisecond {
		t.Fatalf("idle peer's active path probed again after %v, want 370..500ms", d)
	}
	busy := at.Add(200 * time.Millisecond)
	m.SetIdle("b", false)
	if p := m.Due(busy, nil); len(p) != 1 {
		t.Fatalf("turned busy: Due = %+v, want a probe at once", p)
	}
	var down []Transition
	for now := busy; now.Before(t0.Add(3 * time.Second)); now = m.NextDeadline() {
		m.Due(now, nil)
		down = append(down, m.Tick(now, nil)...)
	}
	if len(down) != 1 || down[0].At.After(busy.Add(300*time.Millisecond)) {
		t.Fatalf("transitions %+v, want down within 300ms of turning busy", down)
	}
}

// Suspect: up, and no evidence for half the detect time plus the RTT.
func TestSuspect(t *testing.T) {
	m := upActive(t) // rtt 0, last evidence t0, detect 300ms
	if m.Suspect(pa, t0.Add(150*time.Millisecond)) {
		t.Fatal("suspect at exactly half the detect time")
	}
	if !m.Suspect(pa, t0.Add(151*time.Millisecond)) {
		t.Fatal("not suspect past half the detect time")
	}
	m.OnPassive(pa, t0.Add(100*time.Millisecond))
	if m.Suspect(pa, t0.Add(200*time.Millisecond)) {
		t.Fatal("suspect right after evidence")
	}
}

// Probe times fall on the 5 ms grid, so many paths share wakes.
func TestProbeGridSharesWakes(t *testing.T) {
	m := newTestMonitor(5)
	for i := range 200 {
		m.SetPath(PathID{Peer: "b", Path: i}, Settings{})
	}
	wakes, probes := 0, 0
	for now := t0; now.Before(t0.Add(10 * time.Second)); now = m.NextDeadline() {
		n := len(m.Due(now, nil))
		m.Tick(now, nil)
		if n > 0 {
			wakes++
			probes += n
		}
		if now.Sub(now.Truncate(probeGrid)) != 0 && now != t0 {
			t.Fatalf("probe wake at %v, off the grid", now)
		}
	}
	if max := int(10*time.Second/probeGrid) + 1; wakes > max || probes < 200*20 {
		t.Fatalf("%d probes in %d wakes; want at most %d wakes", probes, wakes, max)
	}
}
