package metrics

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// PathStatsSeries is one path's relay_path_loss_ratio,
// relay_probes_lost_total and relay_probe_rtt_outliers_total series,
// looked up once (PathStatsFor) rather than by their labels at every
// change, as ProbeCounter is for probes sent. It stays valid until
// RemovePath or RemovePeer removes the series; after that its Set exports
// nothing (a new PathStatsFor creates the series again). The zero value
// records nothing.
type PathStatsSeries struct {
	loss     prometheus.Gauge
	lost     cumulativeHandle
	outliers cumulativeHandle
}

// PathStatsFor returns the path's loss and probe-outcome series.
func (m *Metrics) PathStatsFor(peer, path string) PathStatsSeries {
	if m == nil {
		return PathStatsSeries{}
	}
	return PathStatsSeries{
		loss:     m.pathLoss.WithLabelValues(peer, path),
		lost:     m.probesLost.handle(peer, path),
		outliers: m.rttOutliers.handle(peer, path),
	}
}

// Set records the path's loss estimate, lost-probe count and RTT-outlier
// count, as Metrics.PathStats and Metrics.RTTOutliers do.
func (s PathStatsSeries) Set(loss float64, probesLost, rttOutliers uint64) {
	if s.loss == nil {
		return
	}
	if math.IsNaN(loss) { // no estimate yet
		loss = 0
	}
	s.loss.Set(min(max(loss, 0), 1))
	s.lost.set(probesLost)
	s.outliers.set(rttOutliers)
}

// cumulativeHandle is one series of a cumulative, looked up once.
type cumulativeHandle struct {
	c *cumulative
	s *cumulativeSeries
}

// handle returns the series with the given label values, creating it.
func (c *cumulative) handle(values ...string) cumulativeHandle {
	key := labelKey(values)
	c.mu.Lock()
	defer c.mu.Unlock()
	return cumulativeHandle{c: c, s: c.seriesLocked(key, values)}
}

// set records the source's current total, as cumulative.set does; a
// series deleted meanwhile stays deleted.
func (h cumulativeHandle) set(total uint64) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	h.s.setLocked(total)
}
