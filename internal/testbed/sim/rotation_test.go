package sim_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/keys"
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

// Our own key rotation on seeded meshes: the key is staged with a random
// deadline; each peer proves it at a random time, or never. The engine
// asks for the switch once, at the moment the last peer proves it or at
// the deadline, whichever comes first, naming the peers that had not
// proved it; every peer's initiations are held at that moment. When the
// device refuses the key (the first switch fails, on odd seeds), the
// holds are released at once and the switch is asked again
// engine.SwitchRetry later. Once it went through, nothing is staged and
// late proofs change nothing.
func TestMeshRotationSwitchesWhenAllProvedOrAtTheDeadline(t *testing.T) {
	reasons := map[string]int{}
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			const peers = 8
			rnd := rand.New(rand.NewPCG(seed, 3))
			fail := int(seed % 2)
			m := sim.New(sim.Options{Seed: seed, Start: t0, Links: sim.RandomLinks(seed, peers, t0, time.Minute), FailSwitches: fail})
			if err := m.Run(t0.Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			staged := m.Now
			deadline := time.Duration(2+rnd.IntN(7)) * time.Second
			m.Step(engine.StageKey{Next: keys.Public{9}, Deadline: deadline, Peers: m.Peers()})
			type proof struct {
				peer string
				at   time.Time
			}
			var proofs []proof
			// Every third seed, all peers prove it before the deadline; the
			// others, three in four prove it within 10 s.
			all, within := seed%3 == 0, 10*time.Second
			if all {
				within = deadline
			}
			for _, p := range m.Peers() {
				if all || rnd.IntN(4) > 0 {
					proofs = append(proofs, proof{p, staged.Add(time.Duration(rnd.Int64N(int64(within))))})
				}
			}
			slices.SortFunc(proofs, func(a, b proof) int { return a.at.Compare(b.at) })
			mark := len(m.Holds)
			for i, pr := range proofs {
				if err := m.Run(pr.at); err != nil {
					t.Fatal(err)
				}
				proofs[i].at = m.Now // Run stops at the first event after pr.at
				m.Step(engine.PeerStaged{Peer: pr.peer})
			}
			// The expected switch: at the last proof when every peer proves
			// before the deadline, else at the deadline.
			want, reason := staged.Add(deadline), "deadline"
			if len(proofs) == peers && proofs[peers-1].at.Before(want) {
				want, reason = proofs[peers-1].at, "all-staged"
			}
			reasons[reason]++
			var waiting []string
			proved := map[string]bool{}
			for _, pr := range proofs {
				if !pr.at.After(want) {
					proved[pr.peer] = true
				}
			}
			for _, p := range m.Peers() {
				if !proved[p] {
					waiting = append(waiting, p)
				}
			}
			if err := m.Run(staged.Add(12 * time.Second)); err != nil {
				t.Fatal(err)
			}
			if len(m.KeySwitches) != 1+fail {
				t.Fatalf("%d switches asked, want %d: %+v", len(m.KeySwitches), 1+fail, m.KeySwitches)
			}
			for i, ks := range m.KeySwitches {
				at := want.Add(time.Duration(i) * engine.SwitchRetry)
				if !ks.At.Equal(at) {
					t.Errorf("switch %d asked at %v, want %v", i, ks.At.Sub(staged), at.Sub(staged))
				}
				if i == 0 && (ks.Reason != reason || !slices.Equal(ks.Waiting, waiting)) {
					t.Errorf("switch %d: %s waiting %v, want %s waiting %v", i, ks.Reason, ks.Waiting, reason, waiting)
				}
				for _, p := range m.Peers() {
					if !heldAt(m.Holds[mark:], p, ks.At, true) {
						t.Errorf("switch %d: %s not held at it", i, p)
					}
					if ks.Failed && !heldAt(m.Holds[mark:], p, ks.At, false) {
						t.Errorf("failed switch %d: %s not released at it", i, p)
					}
				}
			}
			if r, ok := m.Engine.Rotation(m.Now); ok {
				t.Fatalf("still staged after the switch: %+v", r)
			}
		})
	}
	if reasons["all-staged"] == 0 || reasons["deadline"] == 0 {
		t.Fatalf("switches by reason %v: the seeds do not exercise both", reasons)
	}
}

// heldAt reports whether a hold of peer began (hold) or ended (!hold) at at.
func heldAt(holds []sim.Hold, peer string, at time.Time, hold bool) bool {
	return slices.ContainsFunc(holds, func(h sim.Hold) bool { return h.Peer == peer && h.Hold == hold && h.At.Equal(at) })
}
