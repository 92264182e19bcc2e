package sim_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// Properties of the engine's path health and selection together, checked
// on the seeded simulated mesh (event-driven fake time: detection has no
// tick granularity on top of its bound).

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMeshCutsDetectedAndFailedOver(t *testing.T) {
	const dur = 150 * time.Second
	seeds := []uint64{1, 2, 3}
	if raceEnabled || testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			m := sim.New(sim.Options{Seed: seed, Start: t0, Links: sim.RandomLinks(seed, 20, t0, dur)})
			if err := m.Run(t0.Add(dur)); err != nil {
				t.Fatal(err)
			}
			r := m.CheckDetection()
			for _, err := range r.Violations {
				t.Error(err)
			}
			if r.Checked < 50 {
				t.Fatalf("only %d cuts checked: the scenario does not exercise detection", r.Checked)
			}
			reasons := map[failover.Reason]int{}
			for _, ev := range m.Events {
				reasons[ev.Reason]++
			}
			if reasons[failover.ReasonDown] == 0 {
				t.Fatalf("no failover at all: %v", reasons)
			}
			t.Logf("%d cuts checked, worst active-path detection %v; events %v", r.Checked, r.WorstActive, reasons)
		})
	}
}

// Two runs from one seed, with traffic and redundancy, decide alike to the
// nanosecond: switches, moves, copies, handshakes and sessions.
func TestMeshDeterministic(t *testing.T) {
	trace := func() string {
		links := sim.RandomLinks(7, 10, t0, time.Minute)
		sim.RandomTraffic(7, links, t0, t0.Add(time.Minute))
		sel := failover.DefaultSettings()
		sel.Redundancy = failover.RedundancyAuto
		m := sim.New(sim.Options{Seed: 7, Start: t0, Selection: sel, Links: links})
		m.Demand = true
		if err := m.Run(t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ev := range m.Events {
			fmt.Fprintf(&b, "%v %v\n", ev.At.Sub(t0), ev)
		}
		for _, mv := range m.Moves {
			fmt.Fprintf(&b, "%v move %s %d %d %v\n", mv.At.Sub(t0), mv.Peer, mv.Active, mv.Second, mv.Gap)
		}
		for _, r := range m.Redundancy {
			fmt.Fprintf(&b, "%v copies %s %q\n", r.At.Sub(t0), r.Peer, r.To)
		}
		for _, h := range m.Handshakes {
			fmt.Fprintf(&b, "%v handshake %s %s\n", h.At.Sub(t0), h.Peer, h.Reason)
		}
		for _, s := range m.Sessions {
			fmt.Fprintf(&b, "%v session %s\n", s.At.Sub(t0), s.Peer)
		}
		return b.String()
	}
	a, b := trace(), trace()
	if a != b || a == "" {
		t.Fatalf("two runs with the same seed differ (or are empty):\n%s\n---\n%s", a, b)
	}
}

// Jitter inside the hysteresis margins must never cause a switch. Two
// cases: equal base RTTs with per-probe jitter as large as the 2 ms margin,
// and bases 1 ms apart with +-1 ms. Smoothing (SRTT, alpha 1/8) keeps the
// cost difference well inside the margins, so the count must be zero.
func TestMeshJitterInsideMarginsNoSwitch(t *testing.T) {
	cases := []struct {
		name         string
		direct, cons time.Duration
		jitter       time.Duration
	}{
		{"equal base, 2ms jitter", 20 * time.Millisecond, 20 * time.Millisecond, 2 * time.Millisecond},
		{"1ms apart, 1ms jitter", 20 * time.Millisecond, 21 * time.Millisecond, time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links := map[string][]*sim.Link{}
			for i := range 10 {
				links[fmt.Sprintf("peer-%02d", i)] = []*sim.Link{
					{Name: "direct", Base: c.direct, Jitter: c.jitter},
					{Name: "consumer", Base: c.cons, Jitter: c.jitter},
				}
			}
			m := sim.New(sim.Options{Seed: 11, Start: t0, Links: links})
			if err := m.Run(t0.Add(3 * time.Minute)); err != nil {
				t.Fatal(err)
			}
			for _, ev := range m.Events {
				if ev.Reason != failover.ReasonInitial {
					t.Errorf("switch under jitter: %v at %v", ev, ev.At.Sub(t0))
				}
			}
			if len(m.Events) != 10 {
				t.Fatalf("%d events, want 10 initial choices", len(m.Events))
			}
		})
	}
}

// The naive selector, on the first of those link sets, does switch: the
// test above can fail.
func TestMeshJitterNaiveSwitches(t *testing.T) {
	links := map[string][]*sim.Link{"peer-00": {
		{Name: "direct", Base: 20 * time.Millisecond, Jitter: 2 * time.Millisecond},
		{Name: "consumer", Base: 20 * time.Millisecond, Jitter: 2 * time.Millisecond},
	}}
	fs := failover.DefaultSettings()
	fs.Selector = failover.SelectorNaive
	m := sim.New(sim.Options{Seed: 11, Start: t0, Selection: fs, Links: links})
	if err := m.Run(t0.Add(2 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	if len(m.Events) < 10 {
		t.Fatalf("naive selector switched only %d times under jitter", len(m.Events))
	}
	t.Logf("naive: %d switches in 2 min", len(m.Events))
}

// A scripted outage: the direct path of one peer is cut for 10 s; traffic
// moves to consumer within the detect time and comes back as a failback
// after failbackHold (and betterHold) once direct is up again.
func TestMeshScriptedOutage(t *testing.T) {
	cut := sim.Window{From: t0.Add(20 * time.Second), To: t0.Add(30 * time.Second)}
	links := map[string][]*sim.Link{"b": {
		{Name: "direct", Base: 10 * time.Millisecond, Cuts: []sim.Window{cut}},
		{Name: "consumer", Base: 30 * time.Millisecond},
	}}
	m := sim.New(sim.Options{Seed: 3, Start: t0, Links: links})
	if err := m.Run(t0.Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range m.Events {
		got = append(got, ev.String())
	}
	want := []string{"b - -> direct (initial)", "b direct -> consumer (down)", "b consumer -> direct (failback)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", got, want)
	}
	if d := m.Events[1].At.Sub(cut.From); d > 300*time.Millisecond+10*time.Millisecond {
		t.Fatalf("failover %v after the cut, want within 310ms", d)
	}
	// Back up after 3 answers at <=500ms (idle), then failbackHold 3s.
	if d := m.Events[2].At.Sub(cut.To); d < 3*time.Second || d > 5*time.Second {
		t.Fatalf("failback %v after the repair, want 3..5s", d)
	}
}
