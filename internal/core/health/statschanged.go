package health

// The shell publishes every path's loss estimate, lost-probe count and
// RTT-outlier count as metrics. They move only on a probe outcome (an
// answer, a loss) or a settings change, so rather than read every path's
// Stats every round, the shell asks which paths had such a change. An
// answer on a path without recent losses and within its RTT bounds moves
// none of them (the loss stays 0), so it does not count: with many peers,
// most paths have no change in a given round even though most of their
// probes are answered in it.

// touch records that p's loss estimate, lost-probe count or RTT-outlier
// count may have moved.
func (m *Monitor) touch(p *path) {
	if !p.changed {
		p.changed = true
		m.changed = append(m.changed, p)
	}
}

// StatsChanged returns, appended to out, the paths whose Loss, ProbesLost
// or RTTOutliers (Stats) may have changed since the previous call, each
// once, and forgets them: those with a lost probe, a settings change of
// the loss window, or an answer that changed Loss or RTTOutliers. A path
// added since then is in the list, so the first call after SetPath reports
// it; a removed path is not.
func (m *Monitor) StatsChanged(out []PathID) []PathID {
	for _, p := range m.changed {
		p.changed = false
		out = append(out, p.id)
	}
	clear(m.changed)
	m.changed = m.changed[:0]
	return out
}
