package multipath

import (
	"maps"
	"net/netip"
	"sync"
	"sync/atomic"

	"golang.zx2c4.com/wireguard/conn"
)

// peer is the bind's state for one logical peer. It lives from the first
// SetPeer or ParseEndpoint of its name until RemovePeer.
type peer struct {
	name   string
	ep     *PeerEndpoint
	route  atomic.Pointer[route] // nil: no path
	tx     atomic.Uint64
	lastTx atomic.Int64 // bind clock nanos of the last Send; 0: never
	// holdInit drops the handshake initiations sent to this peer (hold.go).
	holdInit atomic.Bool

	// Redundant sending (redundant.go).
	txData   atomic.Uint64 // transport messages carrying a packet
	dupPkts  atomic.Uint64 // copies sent to the secondary path
	dupBytes atomic.Uint64
	copies   atomic.Pointer[copyRing]

	// indices is a ring of the session indices last learned for this peer
	// (guarded by Bind.mu).
	indices [maxIndices]uint32
	nIdx    int
	nextIdx int

	// sources counts received data per source address; see attrib.go.
	srcMu   sync.Mutex // serialises inserting into srcs
	srcs    [maxSources]atomic.Pointer[source]
	nextSrc int // next slot to replace when full (guarded by srcMu)
}

// route is an immutable snapshot of a peer's paths and its active choice.
// Send reads it with one atomic load.
type route struct {
	paths     []Path
	eps       []conn.Endpoint // inner endpoints, parsed once per path; nil if unparsable
	active    int
	secondary int          // copies of transport data go here too; -1: none
	pend      *pendingMove // a move waiting for a flowlet boundary (flowlet.go)
}

// PeerEndpoint is the send endpoint of a logical peer. wireguard-go keeps it
// as the peer's endpoint; the bind resolves it to the active path on every
// Send.
type PeerEndpoint struct {
	p    *peer
	bind *Bind
}

// Peer is the logical peer's name.
func (e *PeerEndpoint) Peer() string { return e.p.name }

// ClearSrc forgets the cached source address of every path, by replacing
// their inner endpoints with fresh ones (wireguard-go calls it after
// rebinding and on handshake retries).
func (e *PeerEndpoint) ClearSrc() {
	b := e.b()
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if r := target(e.p.route.Load()); r != nil {
		n := b.newRoute(r.paths, r.active)
		n.secondary = r.secondary
		e.p.route.Store(n)
	}
}

// SrcToString is the active path's cached source, if any.
func (e *PeerEndpoint) SrcToString() string {
	if ep := e.activeInner(); ep != nil {
		return ep.SrcToString()
	}
	return ""
}

// DstToString is the logical endpoint, so the UAPI reports endpoint=peer:NAME.
func (e *PeerEndpoint) DstToString() string { return EndpointString(e.p.name) }

// DstToBytes is the active path's address.
func (e *PeerEndpoint) DstToBytes() []byte {
	b, _ := e.activePath().Addr.MarshalBinary()
	return b
}

// DstIP is the active path's IP.
func (e *PeerEndpoint) DstIP() netip.Addr { return e.activePath().Addr.Addr() }

// SrcIP is the active path's cached source IP, if any.
func (e *PeerEndpoint) SrcIP() netip.Addr {
	if ep := e.activeInner(); ep != nil {
		return ep.SrcIP()
	}
	return netip.Addr{}
}

func (e *PeerEndpoint) activePath() Path {
	if r := e.p.route.Load(); r != nil {
		return r.paths[r.active]
	}
	return Path{}
}

func (e *PeerEndpoint) activeInner() conn.Endpoint {
	if r := e.p.route.Load(); r != nil {
		return r.eps[r.active]
	}
	return nil
}

// b finds the bind through the peer's back pointer.
func (e *PeerEndpoint) b() *Bind { return e.bind }

// newRoute parses the inner endpoint of every path. Unparsable paths get a
// nil endpoint and Send to them fails with ErrNoPath.
func (b *Bind) newRoute(paths []Path, active int) *route {
	if len(paths) == 0 {
		return nil
	}
	r := &route{paths: append([]Path(nil), paths...), eps: make([]conn.Endpoint, len(paths)), active: active, secondary: -1}
	for i, p := range r.paths {
		if ep, err := b.inner.ParseEndpoint(p.Addr.String()); err == nil {
			r.eps[i] = ep
		}
	}
	return r
}

// peerFor returns the named peer, creating it without paths if needed.
func (b *Bind) peerFor(name string) *peer {
	if m := b.peers.Load(); m != nil {
		if p, ok := (*m)[name]; ok {
			return p
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peerForLocked(name)
}

func (b *Bind) peerForLocked(name string) *peer {
	old := b.peers.Load()
	if old != nil {
		if p, ok := (*old)[name]; ok {
			return p
		}
	}
	p := &peer{name: name}
	p.ep = &PeerEndpoint{p: p, bind: b}
	m := make(map[string]*peer)
	if old != nil {
		maps.Copy(m, *old)
	}
	m[name] = p
	b.peers.Store(&m)
	return p
}

// SetPeer adds or updates a peer's paths. The active and secondary paths
// are kept, by name, if they still exist; otherwise path 0 becomes active
// and there is no secondary. A move waiting for a flowlet boundary (Move)
// stays pending, by name, if both of its routes' active paths still
// exist; otherwise it completes at once. With no paths, Send to the peer
// fails with ErrNoPath.
func (b *Bind) SetPeer(name string, paths []Path) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.peerForLocked(name)
	cur := p.route.Load()
	to := b.newRoute(paths, 0)
	if to == nil {
		p.route.Store(nil)
		return
	}
	tgt := target(cur)
	if tgt == nil {
		p.route.Store(to)
		return
	}
	to.active, _ = indexOf(paths, tgt.paths[tgt.active].Name, 0)
	to.secondary = keepSecondary(paths, tgt, to.active)
	if cur.pend != nil {
		if held, ok := indexOf(paths, cur.paths[cur.active].Name, -1); ok {
			next := *to // paths and eps are shared: immutable
			next.active = held
			next.secondary = keepSecondary(paths, cur, held)
			next.pend = &pendingMove{to: to, fl: cur.pend.fl}
			p.route.Store(&next)
			return
		}
	}
	p.route.Store(to)
}

// indexOf is the index of the path called name in paths; def and false if
// there is none.
func indexOf(paths []Path, name string, def int) (int, bool) {
	for i, path := range paths {
		if path.Name == name {
			return i, true
		}
	}
	return def, false
}

// keepSecondary is the index in paths of r's secondary path, by name; -1
// if r has none, it is gone, or it is the active path.
func keepSecondary(paths []Path, r *route, active int) int {
	if r.secondary < 0 {
		return -1
	}
	i, ok := indexOf(paths, r.paths[r.secondary].Name, -1)
	if !ok || i == active {
		return -1
	}
	return i
}

// RemovePeer forgets a peer: its endpoint stops working (ErrNoPath), its
// learned session indices and counters are dropped. A later SetPeer of the
// same name starts afresh, with a new endpoint.
func (b *Bind) RemovePeer(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.peers.Load()
	if old == nil {
		return
	}
	p, ok := (*old)[name]
	if !ok {
		return
	}
	p.route.Store(nil)
	m := maps.Clone(*old)
	delete(m, name)
	b.peers.Store(&m)
	b.forgetIndicesLocked(p)
}

// SetActive makes paths[path] the peer's active path; the next Send uses
// it. Unknown peers and out-of-range indices are ignored (check Active).
func (b *Bind) SetActive(peerName string, path int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.peers.Load()
	if m == nil {
		return
	}
	p, ok := (*m)[peerName]
	if !ok {
		return
	}
	cur := p.route.Load()
	r := target(cur)
	if r == nil || path < 0 || path >= len(r.paths) || (path == r.active && cur.pend == nil) {
		return
	}
	next := *r // paths and eps are shared: immutable; a pending move completes
	next.active = path
	if next.secondary == path {
		next.secondary = -1
	}
	p.route.Store(&next)
}

// Active returns the peer's active path; false if the peer is unknown or
// has no path.
func (b *Bind) Active(peerName string) (Path, bool) {
	p := b.lookup(peerName)
	if p == nil {
		return Path{}, false
	}
	r := p.route.Load()
	if r == nil {
		return Path{}, false
	}
	return r.paths[r.active], true
}

func (b *Bind) lookup(name string) *peer {
	m := b.peers.Load()
	if m == nil {
		return nil
	}
	return (*m)[name]
}

// TxBytes is the number of bytes sent to the peer through its endpoint.
func (b *Bind) TxBytes(peerName string) uint64 {
	if p := b.lookup(peerName); p != nil {
		return p.tx.Load()
	}
	return 0
}
