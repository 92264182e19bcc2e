package metrics

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// noPath is the from/to label of a switch that starts or ends with no usable
// path (the first selection after startup, or the last path going down).
const noPath = "none"

// PathUp records whether the path to the peer is up.
func (m *Metrics) PathUp(peer, path string, up bool) {
	if m == nil {
		return
	}
	m.pathUp.WithLabelValues(peer, path).Set(b2f(up))
}

// PathConfigured gives a configured path its relay_path_up series, at 0
// until the path comes up, so that a path down since start shows; a series
// the path already has keeps its value.
func (m *Metrics) PathConfigured(peer, path string) {
	if m == nil {
		return
	}
	m.pathUp.WithLabelValues(peer, path)
}

// PathActive records whether the path carries the peer's traffic.
func (m *Metrics) PathActive(peer, path string, active bool) {
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

// PathStats records what the health monitor reports about a path: its
// estimated loss ratio (clamped to [0, 1]) and its cumulative count of lost
// probes (a total, not an increment; see PeerBytes for resets).
func (m *Metrics) PathStats(peer, path string, loss float64, probesLost uint64) {
	if m == nil {
		return
	}
	if math.IsNaN(loss) { // no estimate yet
		loss = 0
	}
	m.pathLoss.WithLabelValues(peer, path).Set(min(max(loss, 0), 1))
	m.probesLost.set(probesLost, peer, path)
}

// RTTOutliers sets the path's count of probe answers whose RTT was
// clipped as an outlier (health.PathStats.RTTOutliers).
func (m *Metrics) RTTOutliers(peer, path string, n uint64) {
	if m == nil {
		return
	}
	m.rttOutliers.set(n, peer, path)
}

// ProbeSent counts one probe sent on the path.
func (m *Metrics) ProbeSent(peer, path string) {
	if m == nil {
		return
	}
	m.probesSent.WithLabelValues(peer, path).Inc()
}

// ProbeCounter is one path's relay_probes_sent_total series, looked up
// once (ProbeCounterFor) rather than by its labels for every probe. It
// stays valid until RemovePath or RemovePeer removes the series; the zero
// value counts nothing.
type ProbeCounter struct{ c prometheus.Counter }

// ProbeCounterFor returns the path's probes-sent series.
func (m *Metrics) ProbeCounterFor(peer, path string) ProbeCounter {
	if m == nil {
		return ProbeCounter{}
	}
	return ProbeCounter{c: m.probesSent.WithLabelValues(peer, path)}
}

// Inc counts one probe sent on the path.
func (p ProbeCounter) Inc() {
	if p.c != nil {
		p.c.Inc()
	}
}

// Switch counts a change of the peer's active path, as the failover state
// machine reports it, and clears relay_path_active of the old path and sets
// it on the new one. from or to may be empty, meaning no path (the first
// selection, or the last path lost); the label then reads "none". reason is
// one of failover's fixed set of reasons.
func (m *Metrics) Switch(peer, from, to, reason string) {
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

// PeerReachable records whether at least one path to the peer is usable.
func (m *Metrics) PeerReachable(peer string, reachable bool) {
	if m == nil {
		return
	}
	m.reachable.WithLabelValues(peer).Set(b2f(reachable))
}

// PeerBytes records the peer's cumulative transfer counters as WireGuard
// reports them: totals, not increments. They are exported at scrape time as
// relay_peer_bytes_total{peer, direction="rx"|"tx"}. A total lower than
// the previous one (WireGuard restarts its counters when the peer is
// re-added to the device) is taken as a reset, and the exported counter
// carries on from where it was, so it never goes down.
func (m *Metrics) PeerBytes(peer string, rx, tx uint64) {
	if m == nil {
		return
	}
	m.peerBytes.set(rx, peer, dirRX)
	m.peerBytes.set(tx, peer, dirTX)
}

// RemovePath removes every series of one path of a peer: its gauges,
// histogram and probe counters, and the switch counters that name it as
// origin or destination. Call it when the path leaves the configuration.
func (m *Metrics) RemovePath(peer, path string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"peer": peer, "path": path}
	for _, v := range []*prometheus.MetricVec{
		m.pathUp.MetricVec, m.pathActive.MetricVec, m.pathRTT.MetricVec,
		m.pathLoss.MetricVec, m.probesSent.MetricVec,
	} {
		v.DeletePartialMatch(l)
	}
	m.switches.DeletePartialMatch(prometheus.Labels{"peer": peer, "from": path})
	m.switches.DeletePartialMatch(prometheus.Labels{"peer": peer, "to": path})
	m.probesLost.deleteMatching(func(v []string) bool { return v[0] == peer && v[1] == path })
	m.rttOutliers.deleteMatching(func(v []string) bool { return v[0] == peer && v[1] == path })
}

// RemovePeer removes every series that carries the peer's label. Call it
// when the peer leaves the configuration.
func (m *Metrics) RemovePeer(peer string) {
	if m == nil {
		return
	}
	l := prometheus.Labels{"peer": peer}
	for _, v := range []*prometheus.MetricVec{
		m.pathUp.MetricVec, m.pathActive.MetricVec, m.pathRTT.MetricVec, m.pathLoss.MetricVec,
		m.probesSent.MetricVec, m.switches.MetricVec,
		m.reachable.MetricVec, m.handshakes.MetricVec,
	} {
		v.DeletePartialMatch(l)
	}
	isPeer := func(v []string) bool { return v[0] == peer }
	m.probesLost.deleteMatching(isPeer)
	m.rttOutliers.deleteMatching(isPeer)
	m.peerBytes.deleteMatching(isPeer)
	m.redundantPkts.deleteMatching(isPeer)
	m.redundantBytes.deleteMatching(isPeer)
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
