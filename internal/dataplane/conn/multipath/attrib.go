package multipath

import (
	"encoding/binary"
	"maps"
	"net/netip"
	"sync/atomic"
	"time"
)

// WireGuard message layout (see the WireGuard whitepaper, section 5.4).
const (
	msgInitiation    = 1
	msgResponse      = 2
	msgTransport     = 4
	sizeInitiation   = 148
	sizeResponse     = 92
	minTransportSize = 32 // 16-byte header + 16-byte tag, empty keepalive
	offSenderIndex   = 4  // initiation and response: our sender index
	offReceiverIndex = 4  // transport: the receiver's (our) index
	offCounter       = 8  // transport: the message's counter
)

// maxIndices is how many session indices are remembered per peer. Each
// handshake we send (every 2 minutes, and every 5 s while retrying) carries
// a fresh index, and the previous, current and next keypairs may all carry
// data; 8 covers that plus a few failed retries.
const maxIndices = 8

// maxSources bounds the source addresses counted per peer: one per path
// plus a NAT rebinding or two. When full, the oldest-inserted is replaced.
const maxSources = 4

// Source is received transport data attributed to a peer, from one source
// address.
type Source struct {
	Addr    netip.AddrPort
	Packets uint64
	Bytes   uint64
}

// source is a Source with counters updated without a lock.
type source struct {
	addr    netip.AddrPort
	packets atomic.Uint64
	bytes   atomic.Uint64
	last    atomic.Int64 // Bind.nanos of the latest credit
	copies  copyWindow   // counters credited as copies (redundant.go), guarded by the peer's dupRing.mu
}

// messageType returns the little-endian WireGuard message type, or 0.
func messageType(pkt []byte) uint32 {
	if len(pkt) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(pkt)
}

// handshakeSenderIndex returns the sender index of a handshake initiation or
// response.
func handshakeSenderIndex(pkt []byte) (uint32, bool) {
	switch messageType(pkt) {
	case msgInitiation:
		if len(pkt) != sizeInitiation {
			return 0, false
		}
	case msgResponse:
		if len(pkt) != sizeResponse {
			return 0, false
		}
	default:
		return 0, false
	}
	return binary.LittleEndian.Uint32(pkt[offSenderIndex:]), true
}

// isTransport reports whether wireguard-go takes pkt for a transport data
// message: type 4 and at least the 32-byte minimum (device/receive.go
// checks nothing more before the lookup and decryption). Neither the size
// modulo 16 nor anything else may narrow this: every message WireGuard may
// authenticate must be marked (authrx.go). A full-MTU message, whose
// plaintext is padded only up to the MTU, need not be a multiple of 16.
func isTransport(pkt []byte) bool {
	return len(pkt) >= minTransportSize && messageType(pkt) == msgTransport
}

// learn records that session index idx belongs to p, evicting p's oldest
// index when p already has maxIndices.
func (b *Bind) learn(p *peer, idx uint32) {
	if m := b.index.Load(); m != nil && (*m)[idx] == p {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lookup(p.name) != p {
		return // removed meanwhile
	}
	m := make(map[uint32]*peer)
	if old := b.index.Load(); old != nil {
		if (*old)[idx] == p {
			return
		}
		maps.Copy(m, *old)
	}
	if p.nIdx == maxIndices {
		evict := p.indices[p.nextIdx]
		if m[evict] == p {
			delete(m, evict)
		}
	} else {
		p.nIdx++
	}
	p.indices[p.nextIdx] = idx
	p.nextIdx = (p.nextIdx + 1) % maxIndices
	m[idx] = p
	b.index.Store(&m)
}

// forgetIndicesLocked drops p's indices from the table.
func (b *Bind) forgetIndicesLocked(p *peer) {
	old := b.index.Load()
	if old == nil {
		return
	}
	m := maps.Clone(*old)
	for i := range p.nIdx {
		if m[p.indices[i]] == p {
			delete(m, p.indices[i])
		}
	}
	p.nIdx, p.nextIdx = 0, 0
	b.index.Store(&m)
}

// count adds received data messages from addr to p, received at now
// (Bind.nanos). It allocates only the first time an address is seen.
func (p *peer) count(addr netip.AddrPort, packets, bytes uint64, now int64) {
	if s := p.sourceOf(addr); s != nil {
		s.packets.Add(packets)
		s.bytes.Add(bytes)
		s.last.Store(now)
		return
	}
	p.srcMu.Lock()
	defer p.srcMu.Unlock()
	slot := -1
	for i := range p.srcs {
		s := p.srcs[i].Load()
		if s != nil && s.addr == addr { // inserted meanwhile
			s.packets.Add(packets)
			s.bytes.Add(bytes)
			s.last.Store(now)
			return
		}
		if s == nil && slot < 0 {
			slot = i
		}
	}
	if slot < 0 {
		slot = p.nextSrc
		p.nextSrc = (p.nextSrc + 1) % maxSources
	}
	s := &source{addr: addr}
	s.packets.Add(packets)
	s.bytes.Add(bytes)
	s.last.Store(now)
	p.srcs[slot].Store(s)
}

// sourceOf returns p's counters for addr, or nil.
func (p *peer) sourceOf(addr netip.AddrPort) *source {
	for i := range p.srcs {
		if s := p.srcs[i].Load(); s != nil && s.addr == addr {
			return s
		}
	}
	return nil
}

// LastRx is when authenticated transport data from addr was last credited
// to the peer, by the bind's clock (SetClock); zero if never (or if the
// source was replaced). It is the demand-mode input of the agent: traffic
// that arrived over a path within the interval replaces its probe.
func (b *Bind) LastRx(peerName string, addr netip.AddrPort) time.Time {
	p := b.lookup(peerName)
	if p == nil {
		return time.Time{}
	}
	s := p.sourceOf(addr)
	if s == nil {
		return time.Time{}
	}
	n := s.last.Load()
	if n == 0 {
		return time.Time{}
	}
	return b.clock.Load().base.Add(time.Duration(n))
}

// RxStats returns the transport data received for the peer, per source
// address (at most a few; the oldest are replaced). Counters only grow,
// except that a replaced source starts again from zero.
//
// Only data that WireGuard authenticated, found fresh (not a replay) and
// delivered is counted, with its size on the wire, credited to the address
// it came from (authrx.go): keepalives, handshakes and everything WireGuard
// rejected are not. A source appears here only once it sent such data, so
// strangers cannot fill the table. This is proof that the path carried the
// peer's traffic, if the bind's TUN wrapper (WrapTUN) is the device given to
// wireguard-go; without it nothing is counted.
func (b *Bind) RxStats(peerName string) []Source {
	c, _ := b.Counters(peerName, nil)
	return c.Sources
}
