package agent

import (
	"math"

	"github.com/liqo-relay/relay/internal/core/health"
)

// Housekeeping publishes counters as metrics every round (100 ms). With
// many idle peers most of them have not moved since the last round, and a
// Prometheus label lookup per series per round would cost more than the
// probing itself, so only what moved is published.

// bytesPub is what publishPeerBytes last exported of a peer. A peerState
// is new whenever its metrics were removed (a changed or rekeyed peer gets
// a new one), so a zero bytesPub always means "not yet published".
type bytesPub struct {
	ok     bool
	rx, tx uint64
}

// publishPeerBytes exports the peer's byte counters if they moved.
func (a *Agent) publishPeerBytes(st *peerState, rx, tx uint64) {
	p := bytesPub{ok: true, rx: rx, tx: tx}
	if st.bytesPub == p {
		return
	}
	st.bytesPub = p
	a.metrics.PeerBytes(st.cfg.Name, rx, tx)
}

// publishPathStats exports the loss estimate and lost-probe count of the
// paths whose stats may have moved since the last round
// (health.Monitor.StatsChanged): every new path once, then those with a
// probe outcome.
func (a *Agent) publishPathStats() {
	a.changedBuf = a.eng.StatsChanged(a.changedBuf[:0])
	for _, id := range a.changedBuf {
		st, ok := a.peers[id.Peer]
		if !ok || id.Path >= len(st.paths) {
			continue
		}
		i := id.Path
		s, ok := a.eng.Stats(id.Peer, i)
		if !ok {
			continue
		}
		ps := &st.paths[i]
		if ps.statsMoved(s) {
			if !ps.hasStats {
				ps.stats, ps.hasStats = a.metrics.PathStatsFor(id.Peer, st.cfg.Paths[i].Name), true
			}
			ps.stats.Set(s.Loss, s.ProbesLost, s.RTTOutliers)
		}
	}
}

// statsMoved reports whether s differs from what was last exported of the
// path, and records it as exported. Every answered probe moves the stats
// as far as the monitor knows, but a healthy path's loss stays 0 and its
// lost and outlier counts still: exporting only what changed saves label
// lookups per answer.
func (ps *pathState) statsMoved(s health.PathStats) bool {
	p := pathStatsPub{ok: true, loss: s.Loss, lost: s.ProbesLost, outliers: s.RTTOutliers}
	if math.IsNaN(p.loss) {
		p.loss = -1 // no estimate yet: NaN never compares equal
	}
	if ps.statsPub == p {
		return false
	}
	ps.statsPub = p
	return true
}

// pathStatsPub is what publishPathStats last exported of a path; the zero
// value means "not yet published" (a pathState is new whenever its series
// may have been removed, as for bytesPub).
type pathStatsPub struct {
	ok       bool
	loss     float64
	lost     uint64
	outliers uint64
}
