package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RTTObserver is one path's relay_path_rtt_seconds series, looked up once
// (RTTObserverFor) rather than by its labels for every answered probe, as
// ProbeCounter is for probes sent. It stays valid until RemovePath or
// RemovePeer removes the series; the zero value records nothing.
type RTTObserver struct{ o prometheus.Observer }

// RTTObserverFor returns the path's RTT series.
func (m *Metrics) RTTObserverFor(peer, path string) RTTObserver {
	if m == nil {
		return RTTObserver{}
	}
	return RTTObserver{o: m.pathRTT.WithLabelValues(peer, path)}
}

// Observe records the round-trip time of one answered probe, as
// Metrics.ObserveRTT does.
func (o RTTObserver) Observe(rtt time.Duration) {
	if o.o != nil {
		o.o.Observe(rtt.Seconds())
	}
}
