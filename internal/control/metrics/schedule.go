package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stages of relay_probe_schedule_delay_seconds.
const (
	// ScheduleWake: how late the owner loop woke against the deadline it
	// slept for (the monitor's next deadline, or the housekeeping bound).
	ScheduleWake = "wake"
	// ScheduleSend: how late a probe went out against its due time.
	ScheduleSend = "send"
)

// scheduleBuckets span timer slop on an idle machine (tens of µs) to a
// relay starved for a second.
var scheduleBuckets = []float64{
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1,
}

// scheduleMetrics are the probe scheduling delay series: how timely the
// relay itself is (docs/failover.md, "Aggressive timers").
type scheduleMetrics struct {
	delay        *prometheus.HistogramVec
	wake, send   prometheus.Observer
	stalls       prometheus.Counter
	stallSeconds prometheus.Counter
}

func newScheduleMetrics() *scheduleMetrics {
	s := &scheduleMetrics{
		delay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "probe_schedule_delay_seconds",
			Help:    "How late the relay ran its probe schedule: wake, the owner loop against the deadline it slept for; send, a probe against its due time.",
			Buckets: scheduleBuckets,
		}, []string{"stage"}),
		stalls: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "stalls_total",
			Help: "Wakes of the owner loop late enough to be reported to the health monitor, whose deadlines moved later by the lateness.",
		}),
		stallSeconds: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "stall_seconds_total",
			Help: "Total lateness of the stalls in relay_stalls_total.",
		}),
	}
	s.wake = s.delay.WithLabelValues(ScheduleWake)
	s.send = s.delay.WithLabelValues(ScheduleSend)
	return s
}

func (s *scheduleMetrics) Describe(ch chan<- *prometheus.Desc) {
	s.delay.Describe(ch)
	s.stalls.Describe(ch)
	s.stallSeconds.Describe(ch)
}

func (s *scheduleMetrics) Collect(ch chan<- prometheus.Metric) {
	s.delay.Collect(ch)
	s.stalls.Collect(ch)
	s.stallSeconds.Collect(ch)
}

// ScheduleDelay records one delay d of stage (ScheduleWake, ScheduleSend).
// Other stages are ignored.
func (m *Metrics) ScheduleDelay(stage string, d time.Duration) {
	if m == nil {
		return
	}
	switch stage {
	case ScheduleWake:
		m.schedule.wake.Observe(d.Seconds())
	case ScheduleSend:
		m.schedule.send.Observe(d.Seconds())
	}
}

// Stall counts one stall of d reported to the health monitor.
func (m *Metrics) Stall(d time.Duration) {
	if m == nil {
		return
	}
	m.schedule.stalls.Inc()
	m.schedule.stallSeconds.Add(d.Seconds())
}
