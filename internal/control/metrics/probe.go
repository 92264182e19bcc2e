package metrics

import "github.com/prometheus/client_golang/prometheus"

// ProbeDropBudget is the reason of a probe dropped before verification
// because its source address had used up its budget (internal/core/health
// SourceBudget).
const ProbeDropBudget = "budget"

// probeDropReasons are every reason of relay_probes_dropped_total, exported
// at 0 from the start.
var probeDropReasons = []string{ProbeDropBudget}

func newProbesDropped() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "probes_dropped_total",
		Help: "Received probe packets dropped before verification, by reason (budget: the source address exceeded its verification budget).",
	}, []string{"reason"})
	for _, r := range probeDropReasons {
		v.WithLabelValues(r)
	}
	return v
}

// ProbeDropped counts one received probe dropped before verification, for
// reason (ProbeDropBudget).
func (m *Metrics) ProbeDropped(reason string) {
	if m == nil {
		return
	}
	m.probesDropped.WithLabelValues(reason).Inc()
}
