package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// Redundancy in auto mode on the seeded mesh, over links without random
// loss (a lossy active path is trouble all along, and its copies never
// stop): after every switch for trouble that leaves a usable spare path,
// the peer's traffic is copied to a path that is up and is not the new
// active one; every start of copying goes to a path that is up; and every
// peer's copying has stopped by the end, 45 s after the last cut (a move
// to a better path may copy for failover.AutoHold too: the path it takes
// has had standby probes only, and is suspect until its first answers at
// the active rate).
func TestMeshRedundancyAutoAfterTrouble(t *testing.T) {
	const dur = 150 * time.Second
	seeds := []uint64{1, 2}
	if raceEnabled || testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			links := sim.RandomLinks(seed, 20, t0, dur)
			for _, ls := range links {
				for _, l := range ls {
					l.Loss = 0
				}
			}
			sel := failover.DefaultSettings()
			sel.Redundancy = failover.RedundancyAuto
			m := sim.New(sim.Options{Seed: seed, Start: t0, Selection: sel, Links: links})
			if err := m.Run(t0.Add(dur + 30*time.Second)); err != nil {
				t.Fatal(err)
			}
			troubled := 0
			for _, ev := range m.Events {
				if !trouble(ev.Reason) || !ev.Spare {
					continue
				}
				troubled++
				if ev.Second < 0 || !ev.SecondUp || ev.Second == linkIndex(m.Links(ev.Peer), ev.To) {
					t.Errorf("%v at %v: copies go to %d (up %v), want a spare path that is up", ev, ev.At.Sub(t0), ev.Second, ev.SecondUp)
				}
			}
			copying := checkCopiesStop(t, m)
			if troubled < 20 || copying < 20 {
				t.Fatalf("%d switches for trouble with a spare path, %d starts or changes of copying: the scenario does not exercise redundancy", troubled, copying)
			}
			t.Logf("%d switches for trouble with a spare path, %d starts or changes of copying", troubled, copying)
		})
	}
}

// trouble reports whether a switch for r is trouble for auto mode: not a
// move to a better path, a failback or the first choice.
func trouble(r failover.Reason) bool {
	return r != failover.ReasonBetter && r != failover.ReasonFailback && r != failover.ReasonInitial
}

// checkCopiesStop checks that every start or change of copying goes to a
// path that is up and that each peer's last change of redundancy stops
// it; it returns the number of starts and changes.
func checkCopiesStop(t *testing.T, m *sim.Mesh) int {
	t.Helper()
	starts := 0
	last := map[string]sim.Redundancy{}
	for _, r := range m.Redundancy {
		last[r.Peer] = r
		if r.To == "" {
			continue
		}
		starts++
		if !r.ToUp {
			t.Errorf("%s at %v: copies go to %s, which is down", r.Peer, r.At.Sub(t0), r.To)
		}
	}
	for peer, r := range last {
		if r.To != "" {
			t.Errorf("%s: still copying to %s at the end (since %v)", peer, r.To, r.At.Sub(t0))
		}
	}
	return starts
}
