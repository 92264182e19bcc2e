package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// noPath is the from/to label of a switch that starts or ends with no usable
// path (the first selection after startup, or the last path going down).
const noPath = "none"

// SetPathUp records whether the path to the peer is up.
func (m *Metrics) SetPathUp(peer, path string, up bool) {
	if m == nil {
		return
	}
	m.pathUp.WithLabelValues(peer, path).Set(b2f(up))
}

// SetPathActive records whether the path carries the peer's traffic. The
// agent sets the new active path to true and the old one to false; see also
// PathSwitched, which does both and counts the switch.
func (m *Metrics) SetPathActive(peer, path string, active bool) {
	if m == nil {
		return
	}
	m.pathActive.WithLabelValues(peer, path).Set(b2f(active))
}

// ObserveRTT records the round-trip time of one answered probe.
func (m *Metrics) ObserveRTT(peer, path string, rtt time.Duration) {
	if m == nil {
		return
	}
	m.pathRTT.WithLabelValues(peer, path).Observe(rtt.Seconds())
}

// SetPathLoss records the estimated loss ratio of the path, clamped to
// [0, 1].
func (m *Metrics) SetPathLoss(peer, path string, ratio float64) {
	if m == nil {
		return
	}
	m.pathLoss.WithLabelValues(peer, path).Set(min(max(ratio, 0), 1))
}

// ProbeSent counts one probe sent on the path.
func (m *Metrics) ProbeSent(peer, path string) {
	if m == nil {
		return
	}
	m.probesSent.WithLabelValues(peer, path).Inc()
}

// ProbeLost counts one probe on the path that was not answered in time.
func (m *Metrics) ProbeLost(peer, path string) {
	if m == nil {
		return
	}
	m.probesLost.WithLabelValues(peer, path).Inc()
}

// PathSwitched counts a change of the peer's active path and moves
// relay_path_active from one path to the other. from or to may be empty,
// meaning no path (the first selection, or the last path lost); it is
// exported as "none". reason comes from the failover state machine's small,
// fixed set of reasons.
func (m *Metrics) PathSwitched(peer, from, to, reason string) {
	if m == nil {
		return
	}
	if from != "" {
		m.pathActive.WithLabelValues(peer, from).Set(0)
	}
	if to != "" {
		m.pathActive.WithLabelValues(peer, to).Set(1)
	}
	m.switches.WithLabelValues(peer, orNone(from), orNone(to), reason).Inc()
}

// SetPeerReachable records whether at least one path to the peer is usable.
func (m *Metrics) SetPeerReachable(peer string, reachable bool) {
	if m == nil {
		return
	}
	m.reachable.WithLabelValues(peer).Set(b2f(reachable))
}

// DeletePath removes every series of one path of a peer: its gauges,
// histogram and probe counters, and the switch counters that name it as
// origin or destination. Call it when the path leaves the configuration.
func (m *Metrics) DeletePath(peer, path string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"peer": peer, "path": path}
	m.pathUp.DeletePartialMatch(l)
	m.pathActive.DeletePartialMatch(l)
	m.pathRTT.DeletePartialMatch(l)
	m.pathLoss.DeletePartialMatch(l)
	m.probesSent.DeletePartialMatch(l)
	m.probesLost.DeletePartialMatch(l)
	m.switches.DeletePartialMatch(prometheus.Labels{"peer": peer, "from": path})
	m.switches.DeletePartialMatch(prometheus.Labels{"peer": peer, "to": path})
}

// DeletePeer removes every series that carries the peer's label. Call it
// when the peer leaves the configuration.
func (m *Metrics) DeletePeer(peer string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"peer": peer}
	for _, v := range []*prometheus.MetricVec{
		m.pathUp.MetricVec, m.pathActive.MetricVec, m.pathRTT.MetricVec, m.pathLoss.MetricVec,
		m.probesSent.MetricVec, m.probesLost.MetricVec, m.switches.MetricVec,
		m.reachable.MetricVec, m.handshakes.MetricVec,
	} {
		v.DeletePartialMatch(l)
	}
	m.peerBytes.delete(peer)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func orNone(path string) string {
	if path == "" {
		return noPath
	}
	return path
}
