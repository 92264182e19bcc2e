package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// firstUp is when the first path of each peer came up.
func firstUp(m *sim.Mesh) map[string]time.Time {
	up := map[string]time.Time{}
	for _, tr := range m.Ups {
		if _, ok := up[tr.ID.Peer]; !ok {
			up[tr.ID.Peer] = tr.At
		}
	}
	return up
}

// Who starts the session: with the smaller key, the relay's startup
// handshake goes out the moment the first path of a peer comes up; with
// the larger key, none goes out before engine.HandshakeDeferral has
// passed since, and, the peers initiating none, ours goes out at the
// first housekeeping round after it.
func TestMeshHandshakeDeferral(t *testing.T) {
	const dur = 20 * time.Second
	for _, c := range []struct {
		self  keys.Public
		delay time.Duration
	}{{keys.Public{}, 0}, {keys.Public{0xff}, engine.HandshakeDeferral}} {
		t.Run(fmt.Sprintf("self%02x", c.self[0]), func(t *testing.T) {
			m := sim.New(sim.Options{Seed: 4, Start: t0, Self: c.self, Links: sim.RandomLinks(4, 20, t0, dur)})
			if err := m.Run(t0.Add(dur)); err != nil {
				t.Fatal(err)
			}
			up := firstUp(m)
			first := map[string]sim.Handshake{}
			for _, h := range m.Handshakes {
				if _, ok := first[h.Peer]; !ok {
					first[h.Peer] = h
				}
			}
			for _, peer := range m.Peers() {
				h, ok := first[peer]
				if !ok {
					t.Errorf("%s: no handshake", peer)
					continue
				}
				from, to := up[peer].Add(c.delay), up[peer].Add(c.delay)
				if c.delay > 0 {
					to = to.Add(sim.HousekeepRound)
				}
				if h.Reason != engine.ReasonStartup || h.At.Before(from) || h.At.After(to) {
					t.Errorf("%s: first handshake %s at %v, first path up at %v: want startup in [%v, %v]",
						peer, h.Reason, h.At.Sub(t0), up[peer].Sub(t0), from.Sub(t0), to.Sub(t0))
				}
				if m.LastHandshake(peer).IsZero() {
					t.Errorf("%s: no session made", peer)
				}
			}
		})
	}
}

// With the larger key, a session the peer initiates within the deferral
// leaves our handshake out altogether.
func TestMeshDeferredHandshakeLeftToThePeer(t *testing.T) {
	links := map[string][]*sim.Link{"p": {{Name: "direct", Base: 10 * time.Millisecond}}}
	m := sim.New(sim.Options{Seed: 1, Start: t0, Self: keys.Public{0xff}, Links: links})
	if err := m.Run(t0.Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Engine.Peer("p"); !v.Reachable || !v.Deferred {
		t.Fatalf("before the peer initiates: %+v, want reachable with the handshake deferred", v)
	}
	m.Initiate("p", m.Now)
	if err := m.Run(t0.Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(m.Handshakes) != 0 || len(m.Sessions) != 1 || !m.Sessions[0].ByPeer {
		t.Fatalf("handshakes %v, sessions %v: want only the peer's session", m.Handshakes, m.Sessions)
	}
	if v, _ := m.Engine.Peer("p"); v.Deferred || !v.Started {
		t.Fatalf("after the deferral: %+v", v)
	}
}
