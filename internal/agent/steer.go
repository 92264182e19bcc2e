package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// steer tells the Bind the peer's active and secondary paths (-1: none)
// after a decision that changed them from oldActive and oldSecond. If the
// peer's traffic would now arrive sooner than over the old paths, the Bind
// moves at a flowlet boundary (failover/flowlet.go), so that no packet
// overtakes one still in flight on the old paths.
func (a *Agent) steer(st *peerState, oldActive, oldSecond, active, second int) {
	gap := a.reorderGap(st, []int{oldActive, oldSecond}, []int{active, second})
	st.moveGap = gap
	a.dp.paths.Move(st.cfg.Name, active, second, gap)
}

// reorderGap is the gap in the peer's traffic a move from the paths old to
// the paths now must wait for: failover.ReorderGap between the fastest of
// each set (by smoothed RTT; a packet sent on several paths arrives by the
// fastest). Only old paths that are up count: what is in flight on a path
// that went down is lost, not overtaken. 0 if there is nothing to overtake.
func (a *Agent) reorderGap(st *peerState, old, now []int) time.Duration {
	fastest := func(idx []int, upOnly bool) (health.PathStats, bool) {
		var best health.PathStats
		found := false
		for _, i := range idx {
			if i < 0 || i >= len(st.cfg.Paths) {
				continue
			}
			s, ok := a.mon.Stats(st.pathID(i))
			if !ok || s.SRTT <= 0 || (upOnly && s.State != health.Up) {
				continue
			}
			if !found || s.SRTT < best.SRTT {
				best, found = s, true
			}
		}
		return best, found
	}
	o, ok := fastest(old, true)
	if !ok {
		return 0
	}
	n, ok := fastest(now, false)
	if !ok {
		return 0
	}
	return failover.ReorderGap(o.SRTT, n.SRTT, o.Jitter)
}

// secondIndex is the index of the peer's secondary path; -1 for none.
func secondIndex(st *peerState) int {
	if st.second == "" {
		return -1
	}
	return pathIndex(st, st.second)
}
