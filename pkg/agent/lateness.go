package agent

import (
	"time"

	"github.com/liqo-relay/relay/pkg/health"
	"github.com/liqo-relay/relay/pkg/metrics"
)

// minStall is the smallest lateness of the owner loop reported to the
// health monitor as a stall (health.Monitor.Stalled). Below it is timer
// slop: Go's timers wake within tens of µs on an idle machine, and the
// monitor ignores a stall shorter than a quarter of a path's interval
// anyway (5 ms at a 20 ms interval), so smaller reports would only cost a
// pass over the paths on every wake.
const minStall = time.Millisecond

// reportLateness measures how late the owner loop woke, at woke, against
// the time it meant to wake, planned (zero: it slept with no timer), and
// tells the monitor, at now, about a stall of at least minStall: the time
// the relay could not run does not count as silence of its paths
// (docs/failover.md, "Aggressive timers"). A wake before planned (a reply
// or a request woke the loop) is not late.
func (a *Agent) reportLateness(planned, woke, now time.Time) {
	if planned.IsZero() || woke.Before(planned) {
		return
	}
	late := now.Sub(planned)
	a.metrics.ScheduleDelay(metrics.ScheduleWake, woke.Sub(planned))
	if late >= minStall {
		a.metrics.Stall(late)
		a.mon.Stalled(late, now)
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
