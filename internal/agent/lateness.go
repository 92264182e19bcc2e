package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/health"
)

// wakePlan is when the owner loop's timer is due: armed when the loop goes
// to sleep, after its step. Only a wake by that timer is measured against
// it, at the moment the timer's tick is received: the loop's own work (a
// step, housekeeping over every peer, a reload, a reply) is time the relay
// ran, and counting it as lateness would credit paths with time in which
// the relay could have noticed their silence (a busy hub would detect dead
// paths ever later).
type wakePlan struct{ due time.Time }

func (w *wakePlan) arm(at time.Time, d time.Duration) { w.due = at.Add(d) }

// late is how late a timer wake at woke is (zero if not armed or early).
func (w wakePlan) late(woke time.Time) time.Duration {
	if w.due.IsZero() || woke.Before(w.due) {
		return 0
	}
	return woke.Sub(w.due)
}

// reportLateness records how late the owner loop's timer woke it (late,
// wakePlan) and tells the engine, at now, which decides whether it is a
// stall (engine.MinStall): the time the relay could not run does not
// count as silence of its paths (docs/failover.md, "Aggressive timers").
func (a *Agent) reportLateness(late time.Duration, now time.Time) {
	a.metrics.ScheduleDelay(metrics.ScheduleWake, late)
	if late > 0 {
		a.carryOut(a.eng.Step(now, engine.Stall{Late: late}))
	}
}

// reportSendDelay records how late each probe of sent went out against
// its due time, after they were all sent.
func (a *Agent) reportSendDelay(sent []health.Probe) {
	if len(sent) == 0 {
		return
	}
	at := a.clock.Now()
	for _, p := range sent {
		a.metrics.ScheduleDelay(metrics.ScheduleSend, at.Sub(p.Due))
	}
}
