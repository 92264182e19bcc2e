package agent

import (
	"math/rand"
	"net/netip"
	"sync"
	"time"

	"golang.zx2c4.com/wireguard/device"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// probePeer is what a Bind receive goroutine needs to answer and match the
// probes of one peer under one sender id. It is immutable; its replay
// filters have their own locks and carry over when the index is rebuilt.
type probePeer struct {
	name string
	key  *health.PeerKey
	rf   *replayState
	// ourNext verifies the peer's proof that it staged our next key
	// (rotation.go); nil when we stage none. Its requests have their own
	// replay filter: the peer sends each probe under both keys.
	ourNext *health.PeerKey
	rfNext  *replayState
	// staged marks the entry of a peer's next key: a request under it says
	// the peer switched to that key.
	staged bool
	// reqs records the peer's fresh requests per path address
	// (peerrequest.go); shared by the peer's entries.
	reqs *requestTimes
}

// replayState is a replay filter with its lock.
type replayState struct {
	mu sync.Mutex
	rf health.ReplayFilter
}

func (r *replayState) accept(epoch, nonce uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rf.Accept(epoch, nonce)
}

// probeIndex maps sender ids to peers. A new one is published (atomically)
// on every config change; receive goroutines only ever read it.
type probeIndex struct {
	bySender map[health.SenderID]*probePeer
	ours     health.SenderID
	epoch    uint64
	// pathAddrs holds every peer path's address, exact ip:port: its
	// configured endpoint and the address its answers came from. Probes
	// from these are always verified, outside the per-source budget.
	pathAddrs map[netip.AddrPort]struct{}
	// reqs is each peer's requestTimes by name; reqBase their common zero.
	reqs    map[string]*requestTimes
	reqBase time.Time
}

// admit decides whether a probe from src is verified (its MAC checked) at
// now. A probe from a known path address always is: a flood spoofed from
// a peer's address must not spend the budget that the peer's genuine
// probes share, and to reach this case a spoofer must forge the exact
// ip:port of a path, which then costs us only MAC verifications. Any other
// source is held to its per-source budget.
func (idx *probeIndex) admit(src netip.AddrPort, budget *probeBudget, now time.Time) bool {
	if _, ok := idx.pathAddrs[unmapAddrPort(src)]; ok {
		return true
	}
	return budget.allow(src.Addr(), now)
}

func unmapAddrPort(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// probeReply carries an authenticated reply from a receive goroutine to the
// owner goroutine.
type probeReply struct {
	peer string
	msg  health.Message
	from netip.AddrPort
	at   time.Time
	// rot is set, and the rest is not used, for a request under a staged
	// key (rotation.go).
	rot rotationSignal
}

func newRand() *rand.Rand { return rand.New(rand.NewSource(time.Now().UnixNano())) }

// publishProbeIndex rebuilds the index from the current peers: on every
// config change, key rotation step, and whenever a path's answers come from
// a new address. The replay filters of sender ids that stay with the same
// peer are carried over.
func (a *Agent) publishProbeIndex() {
	old := a.probes.Load()
	idx := &probeIndex{
		bySender:  make(map[health.SenderID]*probePeer, len(a.peers)),
		epoch:     a.epoch,
		pathAddrs: map[netip.AddrPort]struct{}{},
		reqs:      make(map[string]*requestTimes, len(a.peers)),
		reqBase:   a.clock.Now(),
	}
	if old != nil && !old.reqBase.IsZero() {
		idx.reqBase = old.reqBase
	}
	var addrs []netip.AddrPort
	add := func(name string, key *health.PeerKey, staged bool) *probePeer {
		id := key.Theirs()
		pp := &probePeer{name: name, key: key, staged: staged, rf: &replayState{}, reqs: idx.reqs[name]}
		if prev, ok := old.bySender[id]; ok && prev.name == name {
			pp.rf, pp.rfNext = prev.rf, prev.rfNext
		}
		idx.bySender[id] = pp
		return pp
	}
	for name, st := range a.peers {
		addrs = addrs[:0]
		for _, p := range st.paths {
			for _, ap := range []netip.AddrPort{p.addr, p.observed} {
				if ap.IsValid() {
					idx.pathAddrs[unmapAddrPort(ap)] = struct{}{}
					addrs = append(addrs, ap)
				}
			}
		}
		var prev *requestTimes
		if old != nil {
			prev = old.reqs[name]
		}
		idx.reqs[name] = newRequestTimes(idx.reqBase, prev, addrs)
		idx.ours = st.key.Ours()
		pp := add(name, st.key, false)
		if a.next != nil {
			pp.ourNext = a.next.keys[name]
			if pp.rfNext == nil {
				pp.rfNext = &replayState{}
			}
		}
		if st.nextKey != nil {
			add(name, st.nextKey, true)
		}
	}
	a.probes.Store(idx)
}

// probeBudget is the per-source verification budget, shared by the Bind's
// receive goroutines. The zero value is ready to use.
type probeBudget struct {
	mu sync.Mutex
	b  *health.SourceBudget
}

func (p *probeBudget) allow(src netip.Addr, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.b == nil {
		p.b = health.NewSourceBudget(0, 0, 0)
	}
	return p.b.Allow(src, now)
}

// handleProbe runs on a Bind receive goroutine for every datagram that looks
// like a probe. It answers authenticated, fresh requests (to the address
// they came from: paths cross NATs) in out, which the Bind sends when the
// received batch has been looked at, and hands replies to the owner
// goroutine. Anything unauthenticated is dropped without an answer; so is
// anything from a source other than a known path address that is over its
// verification budget, before any cryptography (probeIndex.admit,
// health.SourceBudget).
func (a *Agent) handleProbe(pkt []byte, from netip.AddrPort, out *multipath.Outbox) {
	var m health.Message
	if health.Unmarshal(pkt, &m) != nil {
		return
	}
	at := a.clock.Now()
	idx := a.probes.Load()
	if !idx.admit(from, &a.budget, at) {
		a.metrics.ProbeDropped(metrics.ProbeDropBudget)
		return
	}
	pp, ok := idx.bySender[m.Sender]
	if !ok {
		a.metrics.ProbeRejected()
		return
	}
	key, rf, sig := pp.key, pp.rf, rotationSignal(0)
	switch {
	case pp.key.Verify(pkt):
		if pp.staged {
			sig = peerSwitched
		}
	case pp.ourNext != nil && pp.ourNext.Verify(pkt):
		key, rf, sig = pp.ourNext, pp.rfNext, peerStaged
	default:
		a.metrics.ProbeRejected()
		return
	}
	switch m.Kind {
	case health.KindRequest:
		if !rf.accept(m.Epoch, m.Nonce) {
			a.metrics.ProbeRejected()
			return
		}
		pp.reqs.record(from, at) // authenticated and fresh: evidence of the path (peerrequest.go)
		var reply [health.ProbeSize]byte
		health.Marshal(&reply, &health.Message{Kind: health.KindReply, Path: m.Path, Nonce: m.Nonce, Epoch: idx.epoch, Sender: key.Ours()})
		key.Seal(&reply)
		out.Add(reply[:], from) // sent with the batch's other answers
		if sig != 0 {
			a.enqueueReply(probeReply{peer: pp.name, rot: sig, at: at})
		}
	case health.KindReply:
		if sig != 0 {
			// The answer to a proof we sent under a peer's next key: it
			// matches no request of the monitor's.
			return
		}
		a.deliverReply(probeReply{peer: pp.name, msg: m, from: from, at: at})
	}
}

func (a *Agent) enqueueReply(r probeReply) {
	select {
	case a.replyc <- r:
	default:
		// The owner goroutine is behind; a missed reply counts as a lost
		// probe, which is the honest outcome for an overloaded relay.
		a.metrics.ProbeRejected()
	}
}

// sendProbe queues one request on path id (flushProbes sends it).
func (a *Agent) sendProbe(p health.Probe) {
	if st, i := a.probePath(p.ID); st != nil {
		a.sendProbeOn(p, st, i)
	}
}

// flushProbes sends the requests queued since the last flush, in one
// batch where the Bind can (one sendmmsg for a whole step's probes).
func (a *Agent) flushProbes() {
	if err := a.dp.paths.Flush(&a.probeOut); err != nil {
		a.log.Debug("sending probes", "err", err)
	}
}

// probePath finds the peer and config index of path id; nil if gone.
func (a *Agent) probePath(id health.PathID) (*peerState, int) {
	st, ok := a.peers[id.Peer]
	if !ok {
		return nil, -1
	}
	i := st.indexOfSlot(id.Path)
	if i < 0 {
		return nil, -1
	}
	return st, i
}

// sendProbeOn queues request p on st's path i (probePath); the owner
// sends what a step queued at its end (flushProbes).
func (a *Agent) sendProbeOn(p health.Probe, st *peerState, i int) {
	if !st.paths[i].addr.IsValid() {
		return
	}
	for _, key := range []*health.PeerKey{st.key, st.nextKey} {
		if key == nil {
			continue
		}
		// Under the peer's next key too while one is staged: that copy is
		// our proof to the peer that we accept its next key (rotation.go).
		var out [health.ProbeSize]byte
		health.Marshal(&out, &health.Message{Kind: health.KindRequest, Path: uint16(p.ID.Path), Nonce: p.Nonce, Epoch: a.epoch, Sender: key.Ours()})
		key.Seal(&out)
		a.probeOut.Add(out[:], st.paths[i].addr)
	}
	ps := &st.paths[i]
	if !ps.hasSent {
		ps.sent, ps.hasSent = a.metrics.ProbeCounterFor(p.ID.Peer, st.cfg.Paths[i].Name), true
	}
	ps.sent.Inc()
}

// onReply handles an authenticated probe in the owner goroutine.
func (a *Agent) onReply(r probeReply) {
	if r.rot != 0 {
		a.onRotationSignal(r)
		return
	}
	st, ok := a.peers[r.peer]
	if !ok {
		return
	}
	i := st.indexOfSlot(int(r.msg.Path))
	if i < 0 || st.answersOtherPath(i, r.from) {
		// An answer that came over another path's socket would credit
		// that path's RTT to this one: drop it.
		return
	}
	if w, ok := a.pings[pingKey{peer: r.peer, nonce: r.msg.Nonce}]; ok {
		w.answer(i, r.at)
		return
	}
	rtt, ok := a.mon.OnReply(st.pathID(i), r.msg.Nonce, r.at)
	if !ok {
		return
	}
	// The epoch is taken only from replies that matched one of our own
	// outstanding requests: a replay cannot fake a restart.
	if a.mon.ObserveEpoch(r.peer, r.msg.Epoch) {
		a.log.Info("peer restarted: starting a new handshake", "peer", r.peer)
		a.kick(st, "peer-restarted", true, r.at)
	}
	if st.paths[i].observed != r.from {
		st.paths[i].observed = r.from
		a.publishProbeIndex() // its probes now come from there too
	}
	ps := &st.paths[i]
	if !ps.hasRTT {
		ps.rtt, ps.hasRTT = a.metrics.RTTObserverFor(r.peer, st.cfg.Paths[i].Name), true
	}
	ps.rtt.Observe(rtt)
	a.observe(st, i, r.at)
}

// answersOtherPath reports whether from is known as another path's address
// (and not as this one's: two paths may share an endpoint).
func (st *peerState) answersOtherPath(i int, from netip.AddrPort) bool {
	if st.paths[i].addr == from || st.paths[i].observed == from {
		return false
	}
	for j, p := range st.paths {
		if j != i && (p.addr == from || p.observed == from) {
			return true
		}
	}
	return false
}

// observe feeds a path's current health into the selector.
func (a *Agent) observe(st *peerState, path int, now time.Time) {
	s, ok := a.mon.Stats(st.pathID(path))
	if !ok {
		return
	}
	a.sel.Observe(st.cfg.Name, st.cfg.Paths[path].Name, failoverObservation(s), now)
}

// handshake starts a WireGuard handshake with st now. With expire, the
// current keys are dropped first (the peer restarted and lost them), which
// also lifts wireguard-go's limit of one initiation per 5 s.
func (a *Agent) handshake(st *peerState, reason string, expire bool) {
	p := a.dp.dev.LookupPeer(device.NoisePublicKey(st.cfg.PublicKey))
	if p == nil {
		return
	}
	if expire {
		p.ExpireCurrentKeypairs()
	}
	if err := p.SendHandshakeInitiation(false); err != nil {
		a.log.Debug("handshake initiation", "peer", st.cfg.Name, "err", err)
	}
	a.metrics.HandshakeInitiated(st.cfg.Name, reason)
}
