package agent

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
	a.changedBuf = a.mon.StatsChanged(a.changedBuf[:0])
	for _, id := range a.changedBuf {
		st, ok := a.peers[id.Peer]
		if !ok {
			continue
		}
		i := st.indexOfSlot(id.Path)
		if i < 0 {
			continue
		}
		if s, ok := a.mon.Stats(id); ok {
			a.metrics.PathStats(id.Peer, st.cfg.Paths[i].Name, s.Loss, s.ProbesLost)
			a.metrics.RTTOutliers(id.Peer, st.cfg.Paths[i].Name, s.RTTOutliers)
		}
	}
}
