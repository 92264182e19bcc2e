package engine

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// act carries out one selection decision: the peer's traffic moves, its
// routes follow its reachability, and its session starts or restarts.
func (e *Engine) act(ev failover.Event, now time.Time) {
	p, ok := e.peers[ev.Peer]
	if !ok {
		return
	}
	e.ready.Switches = append(e.ready.Switches, ev)
	wasReachable := p.reachable
	if ev.To == "" {
		p.reachable = false
	} else {
		i := p.pathIndex(ev.To)
		if i < 0 {
			return
		}
		old := p.active
		oldSecond := p.secondIndex()
		p.active, p.reachable = i, true
		second := oldSecond
		if second == i {
			second = -1
		}
		if wasReachable {
			e.steer(p, old, oldSecond, i, second)
		} else {
			p.moveGap = 0 // nothing in flight to overtake
			e.ready.Moves = append(e.ready.Moves, Move{Peer: ev.Peer, Active: i, Second: second})
		}
		e.mon.SetActive(p.id(old), false)
		e.mon.SetActive(p.id(p.active), true)
	}
	e.updateRedundancy(p, now, troubleSwitch(ev.Reason))
	if wasReachable != p.reachable {
		e.ready.Routes = append(e.ready.Routes, Route{Peer: ev.Peer, Reachable: p.reachable})
	}
	switch {
	case p.reachable && !p.started:
		// The first working path: start the session now (and only now, so
		// that the first initiation does not go down a dead path and wait
		// for WireGuard's 5 s retry).
		e.kick(p, p.hsReason, false, now)
	case !wasReachable && p.reachable:
		// Coming back from all-down: if WireGuard's session went stale while
		// no path worked, don't wait for its 5 s retry timer.
		if last := e.facts.LastHandshake(p.spec.Name); last.IsZero() || now.Sub(last) > staleSession {
			e.kick(p, ReasonRecovered, true, now)
		}
	}
}

// steer tells the Bind the peer's active and secondary paths (-1: none)
// after a decision that changed them from oldActive and oldSecond. If the
// peer's traffic would now arrive sooner than over the old paths, the Bind
// moves at a flowlet boundary (failover/flowlet.go), so that no packet
// overtakes one still in flight on the old paths.
func (e *Engine) steer(p *peer, oldActive, oldSecond, active, second int) {
	gap := e.reorderGap(p, []int{oldActive, oldSecond}, []int{active, second})
	p.moveGap = gap
	e.ready.Moves = append(e.ready.Moves, Move{Peer: p.spec.Name, Active: active, Second: second, Gap: gap})
}

// reorderGap is the gap in the peer's traffic a move from the paths old to
// the paths now must wait for: failover.ReorderGap between the fastest of
// each set (by smoothed RTT; a packet sent on several paths arrives by the
// fastest). Only old paths that are up count: what is in flight on a path
// that went down is lost, not overtaken. 0 if there is nothing to overtake.
func (e *Engine) reorderGap(p *peer, old, now []int) time.Duration {
	fastest := func(idx []int, upOnly bool) (health.PathStats, bool) {
		var best health.PathStats
		found := false
		for _, i := range idx {
			if i < 0 || i >= len(p.spec.Paths) {
				continue
			}
			s, ok := e.mon.Stats(p.id(i))
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
