package sim_test

import (
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// A key switch on the seeded mesh: HoldAll holds our initiations to every
// peer at once. Half the peers move to our new key and initiate, each at
// its own time; the others never do. Each hold ends at the first
// housekeeping round after the peer's session under the new key is made
// (after the hold began), or after engine.InitiationHold when no such
// session comes first.
func TestMeshHoldsEndWithTheNewSession(t *testing.T) {
	const peers = 10
	m := sim.New(sim.Options{Seed: 6, Start: t0, Links: sim.RandomLinks(6, peers, t0, time.Minute)})
	if err := m.Run(t0.Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	held, mark := m.Now, len(m.Holds)
	m.Step(engine.HoldAll{})
	holding := map[string]bool{}
	for _, h := range m.Holds[mark:] {
		holding[h.Peer] = h.Hold && h.At.Equal(held)
	}
	for i, peer := range m.Peers() {
		if !holding[peer] {
			t.Fatalf("%s: no hold at the key switch: %v", peer, m.Holds[mark:])
		}
		if i%2 == 0 {
			m.Initiate(peer, held.Add(time.Duration(i)*700*time.Millisecond))
		}
	}
	if err := m.Run(held.Add(engine.InitiationHold + time.Second)); err != nil {
		t.Fatal(err)
	}
	bySession, byTime := 0, 0
	for _, peer := range m.Peers() {
		want := held.Add(engine.InitiationHold)
		for _, s := range m.Sessions {
			if s.Peer == peer && s.At.After(held) && s.At.Before(want) {
				want = s.At
			}
		}
		end, ok := holdEnd(m.Holds[mark:], peer)
		if !ok || end.Before(want) || end.After(want.Add(sim.HousekeepRound)) {
			t.Errorf("%s: hold ends at %v (%v), want at the first round from %v", peer, end.Sub(held), ok, want.Sub(held))
		}
		if want.Equal(held.Add(engine.InitiationHold)) {
			byTime++
		} else {
			bySession++
		}
	}
	t.Logf("%d holds ended by a session, %d by time", bySession, byTime)
	if bySession < peers/4 || byTime < peers/4 {
		t.Fatalf("%d holds ended by a session, %d by time: the scenario does not exercise both", bySession, byTime)
	}
}

// holdEnd is when the peer's hold ended.
func holdEnd(holds []sim.Hold, peer string) (time.Time, bool) {
	for _, h := range holds {
		if h.Peer == peer && !h.Hold {
			return h.At, true
		}
	}
	return time.Time{}, false
}
