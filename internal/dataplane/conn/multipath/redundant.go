package multipath

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"
)

// Redundant sending. With a secondary path set (SetSecondary), Send sends
// every transport data message of the peer over the active path and a copy
// over the secondary one. The receiving WireGuard keeps whichever copy it
// authenticates first and drops the other as a replay (its replay window,
// keyed by the message counter), so the application sees each packet once.
// Handshake messages go over the active path only.
//
// The receiving bind also uses the copies as evidence that their path
// works. The copy WireGuard delivers is credited as any message is
// (authrx.go). The one it would drop never reaches the TUN device, so the
// bind recognises it itself: the TUN wrapper records, for a sample of the
// delivered messages (those whose counter is a multiple of copySample), the
// receiver index, counter and tag (the message's last 16 bytes, its
// Poly1305 tag) and the source it came from; a later message from another
// source with the same index, counter and tag is a copy of an
// authenticated message, byte for byte. It is credited to its source if
// that source is already known for the peer (it delivered authenticated
// data before, or is one of the peer's configured path addresses) and its
// counter is new on that source (copyWindow): a copy replayed on the same
// path counts once. The bind then drops it before WireGuard, which would
// only spend a decryption to drop it.
//
// What this trusts: someone who sees the peer's traffic on one path and can
// send from the exact address of another known path can keep that path
// credited by re-sending sampled copies there. Probes are unaffected, and
// without redundant sending no copy is ever credited unless such a sender
// exists.

// copySample: the messages whose counter is a multiple of this are
// recorded and recognised as copies. Evidence needs samples, not every
// message; sampling bounds the per-peer table and the per-packet work.
const copySample = 16

// copyRingSize entries per peer cover copyRingSize x copySample = 1024
// messages between a delivered message and its copy, more than the delay
// difference of two paths holds at any rate that matters for evidence (a
// path whose copies always arrive later than that is still probed).
const copyRingSize = 64

func sampled(ctr uint64) bool { return ctr%copySample == 0 }

// copyEntry is one delivered, sampled message.
type copyEntry struct {
	idx uint32
	ctr uint64
	tag [tagSize]byte
	src netip.AddrPort
}

// copyRing is a peer's record of delivered messages, allocated on the
// peer's first delivered sampled message.
type copyRing struct {
	mu sync.Mutex
	e  [copyRingSize]copyEntry
}

func (r *copyRing) record(idx uint32, ctr uint64, tag [tagSize]byte, src netip.AddrPort) {
	r.mu.Lock()
	r.e[(ctr/copySample)%copyRingSize] = copyEntry{idx: idx, ctr: ctr, tag: tag, src: src}
	r.mu.Unlock()
}

// dupRing returns p's ring, creating it.
func (p *peer) dupRing() *copyRing {
	if r := p.copies.Load(); r != nil {
		return r
	}
	r := &copyRing{}
	if p.copies.CompareAndSwap(nil, r) {
		return r
	}
	return p.copies.Load()
}

// copyWindow remembers which sampled counters of one receiver index were
// credited as copies from one source: the highest, and a bitmap of the 64
// sampled counters below it. A new index (a new session) starts it afresh;
// counters that fall behind the window are not credited.
type copyWindow struct {
	idx  uint32
	top  uint64 // highest sampled counter / copySample, plus one; 0: empty
	bits uint64 // bit i: top-1-i was seen
}

// fresh reports whether ctr is new for idx, and records it.
func (w *copyWindow) fresh(idx uint32, ctr uint64) bool {
	n := ctr/copySample + 1
	if w.idx != idx || w.top == 0 {
		w.idx, w.top, w.bits = idx, n, 1
		return true
	}
	switch {
	case n > w.top:
		shift := n - w.top
		if shift >= 64 {
			w.bits = 0
		} else {
			w.bits <<= shift
		}
		w.bits |= 1
		w.top = n
		return true
	case w.top-n >= 64:
		return false
	default:
		bit := uint64(1) << (w.top - n)
		if w.bits&bit != 0 {
			return false
		}
		w.bits |= bit
		return true
	}
}

// creditCopy credits pkt, a sampled transport message from src, if it is a
// copy of a delivered message that arrived from another source (see
// above), and reports whether it did: the caller drops it.
func (b *Bind) creditCopy(index map[uint32]*peer, pkt []byte, src netip.AddrPort, now int64) bool {
	idx := binary.LittleEndian.Uint32(pkt[offReceiverIndex:])
	p := index[idx]
	if p == nil {
		return false
	}
	r := p.copies.Load()
	if r == nil {
		return false
	}
	ctr := binary.LittleEndian.Uint64(pkt[offCounter:])
	s := p.sourceOf(src)
	if s == nil && !p.isPathAddr(src) {
		return false
	}
	r.mu.Lock()
	e := &r.e[(ctr/copySample)%copyRingSize]
	if e.idx != idx || e.ctr != ctr || e.src == src || string(e.tag[:]) != string(pkt[len(pkt)-tagSize:]) {
		r.mu.Unlock()
		return false
	}
	if s == nil {
		r.mu.Unlock()
		p.count(src, 0, 0, 0) // a configured path address: give it counters
		r.mu.Lock()
		if s = p.sourceOf(src); s == nil {
			r.mu.Unlock()
			return false
		}
	}
	fresh := s.copies.fresh(idx, ctr)
	r.mu.Unlock()
	if fresh {
		p.count(src, 1, uint64(len(pkt)), now)
	}
	return true // a copy either way: WireGuard would drop it
}

// isPathAddr reports whether addr is one of p's configured path addresses.
func (p *peer) isPathAddr(addr netip.AddrPort) bool {
	r := p.route.Load()
	if r == nil {
		return false
	}
	for _, path := range r.paths {
		if path.Addr == addr {
			return true
		}
	}
	return false
}

// SetSecondary makes paths[path] the peer's secondary path: every
// transport data message sent to the peer is also sent there. A negative
// path, the active path itself, or an out-of-range one turns redundant
// sending off. Unknown peers are ignored.
func (b *Bind) SetSecondary(peerName string, path int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.lookup(peerName)
	if p == nil {
		return
	}
	cur := p.route.Load()
	r := target(cur)
	if r == nil {
		return
	}
	if path < 0 || path >= len(r.paths) || path == r.active {
		path = -1
	}
	if path == r.secondary && cur.pend == nil {
		return
	}
	next := *r // a pending move completes
	next.secondary = path
	p.route.Store(&next)
}

// Secondary returns the peer's secondary path; false when it has none.
func (b *Bind) Secondary(peerName string) (Path, bool) {
	p := b.lookup(peerName)
	if p == nil {
		return Path{}, false
	}
	r := p.route.Load()
	if r == nil || r.secondary < 0 {
		return Path{}, false
	}
	return r.paths[r.secondary], true
}

// Redundant returns the copies sent to the peer's secondary path and their
// bytes on the wire: what redundant sending costs.
func (b *Bind) Redundant(peerName string) (packets, bytes uint64) {
	if p := b.lookup(peerName); p != nil {
		return p.dupPkts.Load(), p.dupBytes.Load()
	}
	return 0, 0
}

// TxData is the number of transport data messages carrying a packet (not
// keepalives) sent to the peer, copies not included: whether the peer
// carries traffic.
func (b *Bind) TxData(peerName string) uint64 {
	if p := b.lookup(peerName); p != nil {
		return p.txData.Load()
	}
	return 0
}

// clockState is the bind's clock and the instant its nanos count from.
// now is nil for the real clock: nanos then reads only the monotonic clock
// (time.Since of a base that carries a monotonic reading), one vDSO call
// instead of the two (wall and monotonic) of time.Now. The data path reads
// the clock once per batch on both sides (Send, the TUN wrapper's Write).
type clockState struct {
	now  func() time.Time
	base time.Time
}

// SetClock sets the clock that dates received data (LastRx); nil restores
// the real clock. Set it before traffic flows: times recorded under the
// previous clock are not comparable.
func (b *Bind) SetClock(now func() time.Time) {
	if now == nil {
		b.clock.Store(&clockState{base: time.Now()})
		return
	}
	b.clock.Store(&clockState{now: now, base: now()})
}

// read is the clock's time.
func (c *clockState) read() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// nanos is the bind clock's time since its base, at least 1 (0 means
// "never" in source.last).
func (b *Bind) nanos() int64 {
	c := b.clock.Load()
	if c.now == nil {
		return max(int64(time.Since(c.base)), 1)
	}
	return max(int64(c.now().Sub(c.base)), 1)
}
