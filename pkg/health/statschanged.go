package health

// The shell publishes every path's loss estimate and lost-probe count as
// metrics. Both move only on a probe outcome (an answer, a loss) or a
// settings change, so rather than read every path's Stats every round, the
// shell asks which paths had one: with many idle peers, most paths have
// none in a given round.

// touch records that p's loss estimate or lost-probe count may have moved.
func (m *Monitor) touch(p *path) {
	if !p.changed {
		p.changed = true
		m.changed = append(m.changed, p)
	}
}

// StatsChanged returns, appended to out, the paths whose Loss or
// ProbesLost (Stats) may have changed since the previous call, each once,
// and forgets them. A path added since then is in the list, so the first
// call after SetPath reports it; a removed path is not.
func (m *Monitor) StatsChanged(out []PathID) []PathID {
	for _, p := range m.changed {
		p.changed = false
		out = append(out, p.id)
	}
	clear(m.changed)
	m.changed = m.changed[:0]
	return out
}
