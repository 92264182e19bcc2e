package engine

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// PeerView is the engine's state of one peer, for status, metrics and the
// shell's own bookkeeping. Its slices are copies.
type PeerView struct {
	// Active is the index of the path the traffic takes; Second that of
	// the path copies go to (-1: none).
	Active, Second int
	Reachable      bool
	// Started: the first path came up and the first handshake went out.
	Started bool
	// Deferred: a handshake is left to the peer for now.
	Deferred bool
	// Held: our handshake initiations to the peer are held.
	Held bool
	// MoveGap is the reorder gap the last move of its traffic waited for.
	MoveGap time.Duration
	// Slots are the paths' health ids (the probe's path field).
	Slots []int
	// Addrs are the paths' addresses; Observed where their answers come
	// from (differs behind NAT; invalid before the first answer).
	Addrs, Observed []netip.AddrPort
}

// Peer returns the state of the peer called name.
func (e *Engine) Peer(name string) (PeerView, bool) {
	p, ok := e.peers[name]
	if !ok {
		return PeerView{}, false
	}
	v := PeerView{
		Active: p.active, Second: p.secondIndex(), Reachable: p.reachable, Started: p.started,
		Deferred: p.deferred != nil, Held: !p.heldAt.IsZero(), MoveGap: p.moveGap,
		Slots:    append([]int(nil), p.slots...),
		Observed: append([]netip.AddrPort(nil), p.observed...),
	}
	for _, s := range p.spec.Paths {
		v.Addrs = append(v.Addrs, s.Addr)
	}
	return v, true
}

// ActivePath is the name of the path the peer's traffic takes, as the
// selector chose it, and false when it has none.
func (e *Engine) ActivePath(name string) (string, bool) { return e.sel.Active(name) }

// Stats is the health of path i of a peer.
func (e *Engine) Stats(name string, i int) (health.PathStats, bool) {
	p, ok := e.peers[name]
	if !ok || i < 0 || i >= len(p.slots) {
		return health.PathStats{}, false
	}
	return e.mon.Stats(p.id(i))
}

// Selection is the selector's state of path i of a peer: its state and
// its penalty.
func (e *Engine) Selection(name string, i int) (failover.State, float64, bool) {
	p, ok := e.peers[name]
	if !ok || i < 0 || i >= len(p.spec.Paths) {
		return 0, 0, false
	}
	path := p.spec.Paths[i].Name
	return e.sel.PathState(name, path), e.sel.Penalty(name, path), true
}

// StatsChanged appends to out the paths whose statistics changed since the
// last call (health.Monitor.StatsChanged), as peer name and path index.
func (e *Engine) StatsChanged(out []PathIndex) []PathIndex {
	e.changedBuf = e.mon.StatsChanged(e.changedBuf[:0])
	for _, id := range e.changedBuf {
		if p, i := e.probePath(id); p != nil {
			out = append(out, PathIndex{Peer: id.Peer, Path: i})
		}
	}
	return out
}

// PathIndex names one path of a peer by its index.
type PathIndex struct {
	Peer string
	Path int
}

// NextNonce takes a nonce from the peer's probe counter for a probe the
// shell sends itself (a ping), which the monitor never matches.
func (e *Engine) NextNonce(name string) (uint64, bool) { return e.mon.NextNonce(name) }

// Reach is the index of the path the peer's traffic takes and whether the
// peer is reachable, without the copies Peer makes.
func (e *Engine) Reach(name string) (active int, reachable bool) {
	p, ok := e.peers[name]
	if !ok {
		return 0, false
	}
	return p.active, p.reachable
}
