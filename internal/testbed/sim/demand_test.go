package sim_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/testbed/sim"
)

// Demand mode on the seeded mesh: traffic replaces probes, yet every cut of
// a path is detected within the same bound as with probes alone (a silent
// path is still detected), and a path only ever comes up on a probe answer.

func demandMesh(t *testing.T, seed uint64, dur time.Duration) *sim.Mesh {
	t.Helper()
	links := sim.RandomLinks(seed, 20, t0, dur)
	sim.RandomTraffic(seed, links, t0, t0.Add(dur))
	m := sim.New(sim.Options{Seed: seed, Start: t0, Links: links})
	m.Demand = true
	if err := m.Run(t0.Add(dur)); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMeshDemandStillDetectsCuts(t *testing.T) {
	const dur = 150 * time.Second
	seeds := []uint64{1, 2, 3}
	if raceEnabled || testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			m := demandMesh(t, seed, dur)
			r := m.CheckDetection()
			for _, err := range r.Violations {
				t.Error(err)
			}
			if r.Checked < 50 {
				t.Fatalf("only %d cuts checked: the scenario does not exercise detection", r.Checked)
			}
			if m.Suppressed == 0 {
				t.Fatal("no probe was replaced by traffic: demand mode was not exercised")
			}
			t.Logf("%d cuts checked, worst active-path detection %v, %d probes replaced by traffic", r.Checked, r.WorstActive, m.Suppressed)
		})
	}
}

// Every up transition happens on a probe answer: traffic alone, or nothing
// at all, never brings a path up.
func TestMeshDemandUpOnlyOnAnswers(t *testing.T) {
	m := demandMesh(t, 4, 90*time.Second)
	if len(m.Ups) == 0 {
		t.Fatal("no path came up")
	}
	for _, up := range m.Ups {
		if !slices.ContainsFunc(m.Answers[up.ID], up.At.Equal) {
			t.Errorf("%v up at %v without a probe answer then", up.ID, up.At.Sub(t0))
		}
	}
}

// A link that carries the peer's traffic all along but answers no probe
// (all probes lost) is never reported up; nor is one with neither.
func TestMeshDemandTrafficAloneNeverUp(t *testing.T) {
	const dur = 30 * time.Second
	links := map[string][]*sim.Link{
		"p": {
			{Name: "direct", Base: 10 * time.Millisecond, Loss: 1, Traffic: []sim.Window{{From: t0, To: t0.Add(dur)}}},
			{Name: "consumer", Base: 10 * time.Millisecond, Loss: 1},
		},
	}
	m := sim.New(sim.Options{Seed: 9, Start: t0, Links: links})
	m.Demand = true
	if err := m.Run(t0.Add(dur)); err != nil {
		t.Fatal(err)
	}
	for i := range links["p"] {
		st, _ := m.Engine.Stats("p", i)
		if len(m.Ups) > 0 || st.State == health.Up || st.Suppressed > 0 || st.ProbesSent == 0 {
			t.Fatalf("path %d: ups %v, stats %+v: want down, probed, nothing suppressed", i, m.Ups, st)
		}
	}
}
