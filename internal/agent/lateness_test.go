package agent

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// TestLateWakeIsAStall: the owner loop that wakes 60 ms after the time it
// slept for reports the stall to the monitor, so that a 20 ms path
// answered just before is not declared down at the late wake; a loop that
// wakes on time reports nothing, and the same path is then down once its
// detect time has passed.
func TestLateWakeIsAStall(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	addr := netip.MustParseAddrPort("192.0.2.1:51820")
	setup := func() *Agent {
		a := &Agent{metrics: metrics.New(), clock: realClock{}}
		a.eng = engine.New(engine.Options{Rand: rand.New(rand.NewPCG(1, 1)), Selection: failover.DefaultSettings()})
		a.eng.Step(t0, engine.SetPeer{Spec: engine.PeerSpec{
			Name: "b", Probing: health.Settings{Interval: 20 * time.Millisecond}, Selection: failover.DefaultSettings(),
			Paths: []engine.PathSpec{{Name: "direct", Addr: addr}},
		}})
		p := a.eng.Step(t0, engine.Tick{}).Probes
		if len(p) != 1 {
			t.Fatalf("%d probes at the start, want 1", len(p))
		}
		a.eng.Step(t0.Add(time.Millisecond), engine.Reply{Peer: "b", Slot: p[0].ID.Path, Nonce: p[0].Nonce, From: addr, At: t0.Add(time.Millisecond)})
		a.eng.Step(t0.Add(time.Millisecond), engine.Tick{})
		return a
	}
	wentDown := func(a *Agent, at time.Time) bool {
		for _, c := range a.eng.Step(at, engine.Tick{}).Paths {
			if !c.Up {
				return true
			}
		}
		return false
	}

	a := setup()
	var plan wakePlan
	plan.arm(t0, 20*time.Millisecond)
	planned := t0.Add(20 * time.Millisecond)
	woke := planned.Add(60 * time.Millisecond)
	a.reportLateness(plan.late(woke), woke)
	if wentDown(a, woke) {
		t.Fatal("after a reported 60ms stall the path went down")
	}
	if n, waked := stallFigures(t, a.metrics); n != 1 || waked != 1 {
		t.Errorf("stalls %v, wake delays observed %v; want 1 and 1", n, waked)
	}

	a = setup()
	a.reportLateness(plan.late(planned.Add(100*time.Microsecond)), planned.Add(100*time.Microsecond))
	if !wentDown(a, woke) {
		t.Fatalf("a loop on time: want the silent path down at %v", woke.Sub(t0))
	}
	if n, _ := stallFigures(t, a.metrics); n != 0 {
		t.Error("a wake 0.1 ms late was counted as a stall")
	}
}

// stallFigures returns relay_stalls_total and the number of wake delays
// observed.
func stallFigures(t *testing.T, m *metrics.Metrics) (stalls float64, wakes uint64) {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			switch f.GetName() {
			case "relay_stalls_total":
				stalls = s.GetCounter().GetValue()
			case "relay_probe_schedule_delay_seconds":
				for _, l := range s.GetLabel() {
					if l.GetName() == "stage" && l.GetValue() == metrics.ScheduleWake {
						wakes = s.GetHistogram().GetSampleCount()
					}
				}
			}
		}
	}
	return stalls, wakes
}

// TestWakePlanCountsOnlySleep: the timer is armed when the loop goes to
// sleep, after its step, so a long step is not lateness; a wake before
// the timer is due (a reply, housekeeping) is not late; an unarmed plan
// never is.
func TestWakePlanCountsOnlySleep(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var plan wakePlan
	if plan.late(t0) != 0 {
		t.Fatal("an unarmed plan reported lateness")
	}
	// The step began at t0 and took 8 ms; the loop armed a 20 ms sleep at
	// its end and the timer fired on time.
	plan.arm(t0.Add(8*time.Millisecond), 20*time.Millisecond)
	if got := plan.late(t0.Add(28 * time.Millisecond)); got != 0 {
		t.Fatalf("a timer on time after an 8 ms step: late %v, want 0", got)
	}
	if got := plan.late(t0.Add(20 * time.Millisecond)); got != 0 {
		t.Fatalf("an early wake: late %v, want 0", got)
	}
	if got := plan.late(t0.Add(40 * time.Millisecond)); got != 12*time.Millisecond {
		t.Fatalf("a wake 12 ms after the timer was due: late %v, want 12ms", got)
	}
}
