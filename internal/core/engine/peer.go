package engine

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// PeerSpec is a peer as the engine decides for it.
type PeerSpec struct {
	Name string
	// PublicKey is the peer's running key: of two relays, the one with the
	// smaller key initiates handshakes at once, the other waits a little.
	PublicKey keys.Public
	// NextKey is the peer's staged next key (zero: none): its notice under
	// that key moves it there (PeerNotice).
	NextKey keys.Public
	Paths   []PathSpec
	Probing health.Settings
	// Selection tunes the selector, and its Redundancy the copying of
	// traffic to a second path.
	Selection failover.Settings
	// Keepalive says the peer has a persistent keepalive, which the shell
	// sets only when its session starts (setting it sends a handshake).
	Keepalive bool
}

// PathSpec is one path of a peer: its name, its bias in the selection and
// its address (invalid while it does not resolve).
type PathSpec struct {
	Name string
	Bias time.Duration
	Addr netip.AddrPort
}

// peer is the engine's state of one peer.
type peer struct {
	spec PeerSpec
	// slots maps a path's index to its stable slot: the health id and the
	// probe's path field. A path keeps its slot across reconfigurations
	// and gets a new one when its address moves.
	slots    []int
	nextSlot int
	observed []netip.AddrPort // where each path's answers come from (NAT)

	active    int    // index of the path the traffic takes
	second    string // the path copies go to; "" none
	reachable bool
	started   bool   // the first path came up and the first handshake went out
	hsReason  string // why the first handshake starts
	deferred  *deferredHandshake
	heldAt    time.Time // holding our initiations since; zero: not held
	rxSeen    map[netip.AddrPort]uint64
	traffic   trafficState
	dup       failover.Duplicator
	moveGap   time.Duration // the reorder gap of the last move
}

func (p *peer) id(i int) health.PathID { return health.PathID{Peer: p.spec.Name, Path: p.slots[i]} }

// indexOfSlot maps a slot back to the path's index, or -1.
func (p *peer) indexOfSlot(slot int) int {
	for i, s := range p.slots {
		if s == slot {
			return i
		}
	}
	return -1
}

// pathIndex is the index of the path called name, or -1.
func (p *peer) pathIndex(name string) int {
	for i, s := range p.spec.Paths {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// secondIndex is the index of the path copies go to, or -1.
func (p *peer) secondIndex() int {
	if p.second == "" {
		return -1
	}
	return p.pathIndex(p.second)
}

// Carried is what SetPeer of spec would keep of the running peer of that
// name: whether its session has started and whether it is reachable (both
// false for a new peer). The shell plans its WireGuard and route changes
// with them before it commits the change.
func (e *Engine) Carried(spec PeerSpec) (started, reachable bool) {
	p, _ := e.carry(SetPeer{Spec: spec})
	return p.started, p.reachable
}

// carry builds the state SetPeer gives the peer, from in and the running
// peer of that name, which it returns too (nil: none). It changes nothing.
func (e *Engine) carry(in SetPeer) (p, old *peer) {
	spec := in.Spec
	spec.Paths = append([]PathSpec(nil), spec.Paths...)
	old = e.peers[spec.Name]
	p = &peer{spec: spec, rxSeen: map[netip.AddrPort]uint64{}, hsReason: ReasonPeerAdded}
	if in.Initial {
		p.hsReason = ReasonStartup
	}
	p.assignSlots(old)
	if old == nil {
		return p, nil
	}
	sameKey := old.spec.PublicKey == spec.PublicKey
	p.heldAt = old.heldAt // the Bind holds by name: release it in time
	if sameKey {
		// The same WireGuard peer: its session, pending handshake and the
		// Bind's counters stay.
		p.started, p.deferred, p.rxSeen = old.started, old.deferred, old.rxSeen
	}
	p.reachable = old.reachable
	if old.active < len(old.spec.Paths) {
		p.active = max(0, p.pathIndex(old.spec.Paths[old.active].Name))
	}
	if path, ok := e.sel.Active(spec.Name); ok && sameKey && p.pathIndex(path) >= 0 {
		p.active, p.reachable = p.pathIndex(path), true
	}
	// The Bind keeps the peer and its secondary path by name, unless that
	// path is gone or is now the active one.
	if i := p.pathIndex(old.second); old.second != "" && i >= 0 && i != p.active {
		p.second = old.second
	}
	return p, old
}

// setPeer adds or changes a peer (SetPeer).
func (e *Engine) setPeer(in SetPeer, now time.Time) {
	p, old := e.carry(in)
	spec := p.spec
	if old != nil && old.spec.PublicKey != spec.PublicKey {
		// A new WireGuard peer: its paths start their health afresh.
		e.forget(old)
		old = nil
	}
	specs := make([]failover.PathSpec, len(spec.Paths))
	for i, s := range spec.Paths {
		specs[i] = failover.PathSpec{Name: s.Name, Bias: s.Bias}
		e.mon.SetPath(p.id(i), spec.Probing)
		e.mon.SetActive(p.id(i), i == p.active)
	}
	if old != nil {
		for j, s := range old.spec.Paths {
			if p.pathIndex(s.Name) < 0 {
				e.mon.RemovePath(old.id(j))
				e.ready.RemovedPaths = append(e.ready.RemovedPaths, PathRef{Peer: spec.Name, Path: s.Name})
			}
		}
	}
	e.sel.SetPeer(spec.Name, specs, spec.Selection)
	e.peers[spec.Name] = p
	e.ready.Moves = append(e.ready.Moves, Move{Peer: spec.Name, Active: p.active, Second: p.secondIndex()})
}

// assignSlots gives p's paths their slots: a path that old (the running
// state of the peer, or nil) has by name keeps its slot and observed
// address, a new one takes the next free slot.
func (p *peer) assignSlots(old *peer) {
	n := len(p.spec.Paths)
	p.slots, p.observed = make([]int, n), make([]netip.AddrPort, n)
	if old != nil {
		p.nextSlot = old.nextSlot
	}
	for i, s := range p.spec.Paths {
		p.slots[i] = -1
		if old == nil {
			continue
		}
		if j := old.pathIndex(s.Name); j >= 0 {
			p.slots[i], p.observed[i] = old.slots[j], old.observed[j]
		}
	}
	for i := range p.slots {
		if p.slots[i] < 0 {
			p.slots[i] = p.nextSlot
			p.nextSlot++
		}
	}
}

// removePeer forgets a peer (RemovePeer).
func (e *Engine) removePeer(name string) {
	p, ok := e.peers[name]
	if !ok {
		return
	}
	e.forget(p)
	delete(e.peers, name)
}

// forget drops the peer's health and selection history.
func (e *Engine) forget(p *peer) {
	for i := range p.spec.Paths {
		e.mon.RemovePath(p.id(i))
	}
	e.sel.RemovePeer(p.spec.Name)
	e.ready.Forget = append(e.ready.Forget, p.spec.Name)
}

// setAddr moves a path to a new address (SetAddr): a new slot, so answers
// still in flight from the old address do not count, and down until
// probes at the new address bring it up. The selector sees it down at
// once and moves traffic to another path if there is one.
func (e *Engine) setAddr(in SetAddr, now time.Time) {
	p, ok := e.peers[in.Peer]
	if !ok || in.Path < 0 || in.Path >= len(p.spec.Paths) || p.spec.Paths[in.Path].Addr == in.Addr {
		return
	}
	i := in.Path
	p.spec.Paths[i].Addr, p.observed[i] = in.Addr, netip.AddrPort{}
	old := p.id(i)
	p.slots[i] = p.nextSlot
	p.nextSlot++
	e.mon.SetPath(p.id(i), p.spec.Probing)
	e.mon.SetActive(p.id(i), i == p.active)
	e.mon.RemovePath(old) // after SetPath: the peer's probe state stays
	e.ready.Paths = append(e.ready.Paths, PathChange{Peer: in.Peer, Path: p.spec.Paths[i].Name, Index: i, Slot: p.slots[i], Up: false, At: now})
	e.observe(p, i, now)
}
