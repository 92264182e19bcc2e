package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// Flowlets on the seeded mesh (no redundancy, so a move leaves one path):
// a move away from a path that is down never waits for a gap in the
// traffic (what is in flight there is lost, not overtaken), no gap is
// above failover.MaxReorderGap, and a failback to a path clearly faster
// than the one it leaves waits for a gap.
func TestMeshFlowletGaps(t *testing.T) {
	const dur = 150 * time.Second
	seeds := []uint64{1, 2}
	if raceEnabled || testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			m := sim.New(sim.Options{Seed: seed, Start: t0, Links: sim.RandomLinks(seed, 20, t0, dur)})
			if err := m.Run(t0.Add(dur)); err != nil {
				t.Fatal(err)
			}
			fromDown := 0
			for _, mv := range m.Moves {
				if mv.Gap > failover.MaxReorderGap {
					t.Errorf("%s at %v: gap %v above the cap", mv.Peer, mv.At.Sub(t0), mv.Gap)
				}
				if mv.From < 0 || mv.From == mv.Active || mv.FromUp {
					continue
				}
				fromDown++
				if mv.Gap != 0 {
					t.Errorf("%s at %v: move from down path %d to %d waits for a gap of %v", mv.Peer, mv.At.Sub(t0), mv.From, mv.Active, mv.Gap)
				}
			}
			faster := checkFailbackGaps(t, m)
			if fromDown < 50 || faster < 10 {
				t.Fatalf("%d moves away from a down path, %d failbacks to a clearly faster path: the scenario does not exercise flowlets", fromDown, faster)
			}
			t.Logf("%d moves away from a down path, %d failbacks to a clearly faster path", fromDown, faster)
		})
	}
}

// checkFailbackGaps checks that every failback to a link faster than the
// one it leaves by more than both jitters waits for a gap; it returns how
// many it checked.
func checkFailbackGaps(t *testing.T, m *sim.Mesh) int {
	t.Helper()
	n := 0
	for _, ev := range m.Events {
		if ev.Reason != failover.ReasonFailback {
			continue
		}
		links := m.Links(ev.Peer)
		from, to := linkIndex(links, ev.From), linkIndex(links, ev.To)
		if links[to].MaxRTT()+failover.ReorderMargin >= links[from].Base-links[from].Jitter {
			continue // not clearly faster: the smoothed RTTs decide
		}
		n++
		mv, ok := moveAt(m, ev.Peer, ev.At, to)
		if !ok {
			t.Errorf("%v at %v: no move", ev, ev.At.Sub(t0))
		} else if mv.Gap <= 0 || mv.From != from {
			t.Errorf("%v at %v: move %+v, want one from %d waiting for a gap", ev, ev.At.Sub(t0), mv, from)
		}
	}
	return n
}

func linkIndex(links []*sim.Link, name string) int {
	for i, l := range links {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// moveAt is the move of peer's traffic to path active at at.
func moveAt(m *sim.Mesh, peer string, at time.Time, active int) (sim.Move, bool) {
	for _, mv := range m.Moves {
		if mv.Peer == peer && mv.At.Equal(at) && mv.Active == active {
			return mv, true
		}
	}
	return sim.Move{}, false
}

// A scripted outage of the 10 ms direct path, with a 30 ms consumer path:
// the move to consumer at the cut does not wait; the failback to direct
// waits for half the RTT difference plus failover.ReorderMargin (the
// paths have no jitter).
func TestMeshScriptedFailbackWaitsForAFlowlet(t *testing.T) {
	cut := sim.Window{From: t0.Add(20 * time.Second), To: t0.Add(30 * time.Second)}
	links := map[string][]*sim.Link{"b": {
		{Name: "direct", Base: 10 * time.Millisecond, Cuts: []sim.Window{cut}},
		{Name: "consumer", Base: 30 * time.Millisecond},
	}}
	m := sim.New(sim.Options{Seed: 3, Start: t0, Links: links})
	if err := m.Run(t0.Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(m.Events) != 3 {
		t.Fatalf("events %v, want initial, down, failback", m.Events)
	}
	away, ok := moveAt(m, "b", m.Events[1].At, 1)
	if !ok || away.Gap != 0 || away.FromUp {
		t.Fatalf("move at the cut %+v (found %v), want one from the down direct path without a gap", away, ok)
	}
	back, ok := moveAt(m, "b", m.Events[2].At, 0)
	want := failover.ReorderGap(30*time.Millisecond, 10*time.Millisecond, 0)
	if !ok || back.Gap < want-time.Millisecond || back.Gap > want+time.Millisecond {
		t.Fatalf("failback move %+v (found %v), want a gap of about %v", back, ok, want)
	}
}
