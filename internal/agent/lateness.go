package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/health"
)

// minStall is the smallest lateness of the owner loop reported to the
// health monitor as a stall (health.Monitor.Stalled). Below it is timer
// slop: Go's timers wake within tens of µs on an idle machine, and the
// monitor ignores a stall shorter than a quarter of a path's interval
// anyway (5 ms at a 20 ms interval), so smaller reports would only cost a
// pass over the paths on every wake.
const minStall = time.Millisecond

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
// wakePlan) and tells the monitor, at now, about a stall of at least
// minStall: the time the relay could not run does not count as silence of
// its paths (docs/failover.md, "Aggressive timers").
func (a *Agent) reportLateness(late time.Duration, now time.Time) {
	a.metrics.ScheduleDelay(metrics.ScheduleWake, late)
	if late >= minStall {
		a.metrics.Stall(late)
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
