package failover

import "time"

// decide runs the selection rules for one peer at now.
func (p *peerState) decide(now time.Time) (Event, bool) {
	if p.dampening() {
		for _, st := range p.paths {
			st.merit.decay(p.s.Dampening, now)
		}
	}
	best := p.best()
	cur := p.path(p.active)
	switch {
	case p.active != "" && cur == nil: // removed from the config
		return p.switchTo(best, ReasonRemoved, now), true
	case best == nil:
		if p.active == "" {
			return Event{}, false
		}
		p.leftDown = "" // whatever comes back first is "recovered", not a failback
		return p.switchTo(nil, ReasonAllDown, now), true
	case cur == nil:
		r := ReasonInitial
		if p.chosen {
			r = ReasonRecovered
		}
		return p.switchTo(best, r, now), true
	case !cur.obs.Up:
		p.leftDown = cur.spec.Name
		return p.switchTo(best, ReasonDown, now), true
	case !p.usable(cur):
		return p.switchTo(best, ReasonDampened, now), true
	case p.s.naive():
		if best != cur && p.cost(best) < p.cost(cur) {
			return p.switchTo(best, ReasonBetter, now), true
		}
		return Event{}, false
	}

	// A healthy active path: only a sustained, clearly better challenger
	// replaces it.
	p.refreshBetter(now)
	var win *pathState
	for _, st := range p.paths {
		if st.betterSince.IsZero() || now.Sub(st.betterSince) < p.s.BetterHold {
			continue
		}
		if st.spec.Name == p.leftDown && now.Sub(st.upSince) < p.s.FailbackHold {
			continue
		}
		if win == nil || p.cost(st) < p.cost(win) {
			win = st
		}
	}
	if win == nil {
		return Event{}, false
	}
	r := ReasonBetter
	if win.spec.Name == p.leftDown {
		r = ReasonFailback
	}
	return p.switchTo(win, r, now), true
}

// switchTo makes to (nil: none) the active path and returns the event.
func (p *peerState) switchTo(to *pathState, r Reason, now time.Time) Event {
	ev := Event{Peer: p.name, From: p.active, Reason: r, At: now}
	if to == nil {
		p.active = ""
		if r == ReasonRemoved {
			ev.Reason = ReasonAllDown
		}
	} else {
		p.active = to.spec.Name
		p.chosen = true
		ev.To = to.spec.Name
		if p.leftDown == to.spec.Name {
			p.leftDown = ""
		}
	}
	for _, st := range p.paths {
		st.betterSince = time.Time{}
	}
	p.refreshBetter(now)
	return ev
}
