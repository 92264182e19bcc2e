package multipath

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

// Moves at a flowlet boundary. Moving a peer's traffic to a path that
// delivers sooner would let the new path overtake packets still in flight
// on the old one (failover/flowlet.go); Move therefore records the new
// route as pending, and Send keeps using the current one until
// failover.Flowlet.Step says the peer's traffic paused long enough, or
// holds the first packet for the new route until it has (at most
// failover.MaxReorderGap).

// pendingMove is a route waiting for a flowlet boundary.
type pendingMove struct {
	to *route // has no pending move itself
	fl failover.Flowlet
}

// target is the route r leads to: its pending route if it has one. The
// control-plane setters build on it, so a later decision is never lost
// behind a pending one; an immediate setter completes the move.
func target(r *route) *route {
	if r != nil && r.pend != nil {
		return r.pend.to
	}
	return r
}

// Move sets the peer's active and secondary paths (secondary < 0: none; as
// SetActive and SetSecondary), waiting for a gap of gap in the peer's
// traffic, or failover.FlowletHold at most, before Send uses them. gap <= 0
// moves at once. Unknown peers and out-of-range active paths are ignored.
func (b *Bind) Move(peerName string, active, secondary int, gap time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.lookup(peerName)
	if p == nil {
		return
	}
	cur := p.route.Load()
	r := target(cur)
	if r == nil || active < 0 || active >= len(r.paths) {
		return
	}
	if secondary < 0 || secondary >= len(r.paths) || secondary == active {
		secondary = -1
	}
	if cur.pend == nil && r.active == active && r.secondary == secondary {
		return
	}
	next := *r // paths and eps are shared: immutable
	next.active, next.secondary, next.pend = active, secondary, nil
	if gap <= 0 {
		p.route.Store(&next)
		return
	}
	now := b.clock.Load().read()
	held := *cur // keeps sending as it does now
	if cur.pend != nil {
		// A move already pending keeps its deadline: the traffic has been
		// waiting for a boundary since then.
		held.pend = &pendingMove{to: &next, fl: failover.Flowlet{Gap: max(cur.pend.fl.Gap, min(gap, failover.MaxReorderGap)), Deadline: cur.pend.fl.Deadline}}
	} else {
		held.pend = &pendingMove{to: &next, fl: failover.NewFlowlet(now, gap, failover.FlowletHold)}
	}
	p.route.Store(&held)
}

// Pending reports whether the peer has a move waiting for a flowlet
// boundary, and the route's active path it leads to.
func (b *Bind) Pending(peerName string) (Path, bool) {
	p := b.lookup(peerName)
	if p == nil {
		return Path{}, false
	}
	r := p.route.Load()
	if r == nil || r.pend == nil {
		return Path{}, false
	}
	return r.pend.to.paths[r.pend.to.active], true
}

// flowletStep decides, for a Send on route r with a pending move, which
// route this send uses, holding it first if the move makes its own gap.
func (b *Bind) flowletStep(p *peer, r *route) *route {
	c := b.clock.Load()
	now := c.read()
	var last time.Time
	if n := p.lastTx.Load(); n > 0 {
		last = c.base.Add(time.Duration(n))
	}
	move, wait := r.pend.fl.Step(now, last)
	if !move {
		return r
	}
	if wait > 0 {
		b.sleep(wait)
	}
	p.route.CompareAndSwap(r, r.pend.to)
	return r.pend.to
}

// sleep holds a send; tests replace it (SetSleep).
func (b *Bind) sleep(d time.Duration) {
	if f := b.sleeper.Load(); f != nil {
		(*f)(d)
		return
	}
	time.Sleep(d)
}

// SetSleep sets how Send holds a packet for a move's gap; nil restores
// time.Sleep. For tests with a fake clock.
func (b *Bind) SetSleep(f func(time.Duration)) {
	if f == nil {
		b.sleeper.Store(nil)
		return
	}
	b.sleeper.Store(&f)
}
