package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

// updateRedundancy decides whether the peer's traffic is copied to a second
// path now (failover.Duplicator, from the peer's redundancy mode and the
// active path's trouble) and to which one (failover.Selector.Second), and
// tells the Bind when that changes. switched says the peer was just moved
// because of trouble (troubleSwitch). It runs at every switch and path
// transition of the peer and every housekeeping round, and records the
// cost in the metrics.
func (a *Agent) updateRedundancy(st *peerState, now time.Time, switched bool) {
	name := st.cfg.Name
	mode := st.cfg.Health.Redundancy
	if (mode == "" || mode == failover.RedundancyOff) && st.second == "" {
		return
	}
	var tr failover.Trouble
	tr.Switched = switched
	if st.reachable {
		id := st.pathID(st.active)
		if s, ok := a.mon.Stats(id); ok {
			tr.Loss = s.Loss
		}
		tr.Suspect = a.mon.Suspect(id, now)
	}
	want := ""
	if st.dup.Step(mode, tr, now) && st.reachable {
		want, _ = a.sel.Second(name)
	}
	if want != st.second {
		i := -1
		if want != "" {
			i = pathIndex(st, want)
		}
		a.steer(st, st.active, secondIndex(st), st.active, i)
		a.log.Info("redundant sending", "peer", name, "mode", string(mode), "to", want, "loss", tr.Loss, "suspect", tr.Suspect, "switched", tr.Switched)
		st.second = want
	}
	if pk, by := a.dp.paths.Redundant(name); pk > 0 {
		a.metrics.Redundant(name, pk, by)
	}
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
