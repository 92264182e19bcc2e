package agent

import (
	"math/rand"
	"net/netip"
	"sync"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
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
		v, _ := a.eng.Peer(name)
		for i, p := range st.paths {
			var observed netip.AddrPort
			if i < len(v.Observed) {
				observed = v.Observed[i]
			}
			for _, ap := range []netip.AddrPort{p.addr, observed} {
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

// flushProbes sends the requests queued since the last flush, in one
// batch where the Bind can (one sendmmsg for a whole step's probes).
func (a *Agent) flushProbes() {
	if err := a.dp.paths.Flush(&a.probeOut); err != nil {
		a.log.Debug("sending probes", "err", err)
	}
}

// sendProbeOn queues the engine's request p to its address; the owner
// sends what a step queued at its end (flushProbes).
func (a *Agent) sendProbeOn(p engine.Probe) {
	st, ok := a.peers[p.ID.Peer]
	i := p.Path
	if !ok || i >= len(st.paths) || !p.To.IsValid() {
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
		a.probeOut.Add(out[:], p.To)
	}
	ps := &st.paths[i]
	if !ps.hasSent {
		ps.sent, ps.hasSent = a.metrics.ProbeCounterFor(p.ID.Peer, st.cfg.Paths[i].Name), true
	}
	ps.sent.Inc()
}

// onReply handles an authenticated probe in the owner goroutine: the
// answer to one of our pings (ping.go), or one for the engine.
func (a *Agent) onReply(r probeReply) {
	if r.rot != 0 {
		a.onRotationSignal(r)
		return
	}
	if w, ok := a.pings[pingKey{peer: r.peer, nonce: r.msg.Nonce}]; ok {
		if i, ok := a.eng.ReplyPath(r.peer, int(r.msg.Path), r.from); ok {
			w.answer(i, r.at)
		}
		return
	}
	a.carryOut(a.eng.Step(r.at, engine.Reply{
		Peer: r.peer, Slot: int(r.msg.Path), Nonce: r.msg.Nonce, Epoch: r.msg.Epoch, From: r.from, At: r.at,
	}))
}

// handshake starts a WireGuard handshake with st now. With expire, the
// current keys are dropped first (the peer restarted and lost them), which
// also lifts wireguard-go's limit of one initiation per 5 s.
func (a *Agent) handshake(st *peerState, reason string, expire bool) {
	if err := a.dp.hs.Initiate(st.cfg.PublicKey, reason, expire); err != nil {
		a.log.Debug("handshake initiation", "peer", st.cfg.Name, "err", err)
	}
	a.metrics.HandshakeInitiated(st.cfg.Name, reason)
}
