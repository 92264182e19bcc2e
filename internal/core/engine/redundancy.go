package engine

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

// updateRedundancy decides whether the peer's traffic is copied to a second
// path now (failover.Duplicator, from the peer's redundancy mode and the
// active path's trouble) and to which one (failover.Selector.Second), and
// moves the copies when that changes. switched says the peer was just
// moved because of trouble (troubleSwitch). It runs at every switch and
// path transition of the peer and every housekeeping round.
func (e *Engine) updateRedundancy(p *peer, now time.Time, switched bool) {
	mode := p.spec.Selection.Redundancy
	if (mode == "" || mode == failover.RedundancyOff) && p.second == "" {
		return
	}
	var tr failover.Trouble
	tr.Switched = switched
	if p.reachable {
		id := p.id(p.active)
		if s, ok := e.mon.Stats(id); ok {
			tr.Loss = s.Loss
		}
		tr.Suspect = e.mon.Suspect(id, now)
	}
	want := ""
	if p.dup.Step(mode, tr, now) && p.reachable {
		want, _ = e.sel.Second(p.spec.Name)
	}
	if want == p.second {
		return
	}
	i := -1
	if want != "" {
		i = p.pathIndex(want)
	}
	e.steer(p, p.active, p.secondIndex(), p.active, i)
	e.ready.Redundancy = append(e.ready.Redundancy, Redundancy{Peer: p.spec.Name, Mode: mode, To: want, Trouble: tr})
	p.second = want
}

// troubleSwitch reports whether a switch for reason r is a sign of trouble
// for redundancy's auto mode: the peer left a path that failed, or came
// back from having none. A move to a better path, a failback and the
// first choice are not.
func troubleSwitch(r failover.Reason) bool {
	switch r {
	case failover.ReasonBetter, failover.ReasonFailback, failover.ReasonInitial:
		return false
	}
	return true
}
