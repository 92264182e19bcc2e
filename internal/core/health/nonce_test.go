package health

import (
	"testing"
	"time"
)

// TestPingNoncesShareTheProbeWindow drives a monitor with two paths to one
// peer and, between its scheduled probes, takes nonces for `relay ping`
// requests (several at once, as concurrent pings do). The peer's replay
// filter, which keeps one window per sender and epoch, must accept every
// request, before and after the pings: a ping must never make later probes
// look old. It also checks that OnReply does not match a ping's nonce.
func TestPingNoncesShareTheProbeWindow(t *testing.T) {
	m := newTestMonitor(3)
	pb := PathID{Peer: "b", Path: 1}
	m.SetPath(pa, Settings{})
	m.SetPath(pb, Settings{})
	m.SetActive(pa, true)
	var peer ReplayFilter // the receiving peer's filter for us
	const epoch = 77
	now := t0
	var probes []Probe
	seen := map[uint64]bool{}
	take := func(what string, n uint64) {
		t.Helper()
		if seen[n] {
			t.Fatalf("%s nonce %d was already used", what, n)
		}
		seen[n] = true
		if !peer.Accept(epoch, n) {
			t.Fatalf("the peer's replay filter dropped %s nonce %d", what, n)
		}
	}
	for step := range 400 {
		probes = m.Due(now, probes[:0])
		for _, p := range probes {
			take("probe", p.Nonce)
		}
		if step%7 == 3 {
			// A burst of pings, as from concurrent `relay ping`s.
			for range 1 + step%5 {
				n, ok := m.NextNonce("b")
				if !ok {
					t.Fatal("NextNonce: peer b unknown")
				}
				take("ping", n)
				if _, ok := m.OnReply(pa, n, now); ok {
					t.Fatalf("OnReply matched ping nonce %d", n)
				}
			}
		}
		now = now.Add(10 * time.Millisecond)
	}
	if len(seen) < 100 {
		t.Fatalf("only %d requests in the run: the schedule did not probe", len(seen))
	}
}

// TestReplayFilterSecondCounterBreaksProbes documents why the wire allows
// one nonce space per sender: a request from a second counter far ahead
// (bit 63 set, as `relay ping` used to send) moves the window, and every
// later request of the first counter is dropped.
func TestReplayFilterSecondCounterBreaksProbes(t *testing.T) {
	var f ReplayFilter
	for n := uint64(100); n < 110; n++ {
		if !f.Accept(1, n) {
			t.Fatalf("probe %d dropped", n)
		}
	}
	if !f.Accept(1, 1<<63|5) {
		t.Fatal("the high request was dropped")
	}
	if f.Accept(1, 110) {
		t.Fatal("a request 2^63 behind the newest was accepted: the window does not slide as documented")
	}
}
