package sim_test

import (
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// Passive evidence from housekeeping alone: the data plane counts the
// packets it received from each address but does not time them
// (CountsOnly). The direct link drops every probe from 20 s to 25 s yet
// carries the peer's data: the packet counts of its address keep it up
// (health.Monitor.OnPassive, fed by the engine's Housekeep).
// Without data it goes down within the detect bound of the mute's start;
// when its data stops during the mute, within the bound of the last
// housekeeping round that counted a packet.
func TestMeshPassiveEvidenceKeepsAMutedPathUp(t *testing.T) {
	mute := sim.Window{From: t0.Add(20 * time.Second), To: t0.Add(25 * time.Second)}
	run := func(demand bool, dataUntil time.Time) *sim.Mesh {
		links := map[string][]*sim.Link{"p": {
			{Name: "direct", Base: 10 * time.Millisecond, Mute: []sim.Window{mute}, Traffic: []sim.Window{{From: t0, To: dataUntil}}},
			{Name: "consumer", Base: 30 * time.Millisecond},
		}}
		m := sim.New(sim.Options{Seed: 5, Start: t0, Links: links})
		m.Demand, m.CountsOnly = demand, true
		if err := m.Run(t0.Add(40 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if m.Suppressed != 0 {
			t.Fatalf("%d probes replaced by traffic without arrival times", m.Suppressed)
		}
		return m
	}
	hs := health.DefaultSettings()
	detect := time.Duration(hs.DetectMultiplier) * hs.Interval
	downAfter := func(m *sim.Mesh, from time.Time, slack time.Duration) {
		t.Helper()
		if len(m.Downs) != 1 || m.Downs[0].ID.Path != 0 {
			t.Fatalf("downs %v, want direct's once", m.Downs)
		}
		took := m.Downs[0].At.Sub(from)
		if bound := detect + health.DeadlineMargin(m.DownJitter[0], detect) + slack; took < 0 || took > bound {
			t.Fatalf("direct down %v after %v, want within %v", took, from.Sub(t0), bound)
		}
	}

	// The probes lost in the mute raise direct's loss estimate, which may
	// move the traffic to consumer as the better path for a while; direct
	// stays up.
	if m := run(true, t0.Add(time.Minute)); len(m.Downs) != 0 {
		t.Fatalf("with data: downs %v, want none", m.Downs)
	}
	downAfter(run(false, t0.Add(time.Minute)), mute.From, 10*time.Millisecond) // the last answer's RTT
	stop := t0.Add(22 * time.Second)
	downAfter(run(true, stop), stop.Add(-sim.HousekeepRound), 0) // the last count dates its evidence a round early
}
