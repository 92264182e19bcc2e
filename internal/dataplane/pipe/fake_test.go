package pipe

// A small in-memory tun.Device for these tests (internal/dataplane/tun/tuntest is not a
// dependency of this package) and a packet builder.

import (
	"encoding/binary"
	"net/netip"
	"os"
	"sync"

	"golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/core/packet"
)

// fakeDev returns queued packets from Read and records Write batches.
type fakeDev struct {
	mu       sync.Mutex
	pending  [][]byte   // returned by the next Reads, in order
	written  [][]byte   // copies of the packets written (without offset)
	writeErr error      // returned by Write after writing writeMax packets
	writeMax int        // 0 = no limit
	batches  [][][]byte // the bufs slices passed to Write
	events   chan tun.Event
}

var _ tun.Device = (*fakeDev)(nil)

func newFakeDev() *fakeDev { return &fakeDev{events: make(chan tun.Event)} }

func (f *fakeDev) queue(pkts ...[]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range pkts {
		f.pending = append(f.pending, append([]byte(nil), p...))
	}
}

func (f *fakeDev) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for n < len(bufs) && len(f.pending) > 0 {
		sizes[n] = copy(bufs[n][offset:], f.pending[0])
		f.pending = f.pending[1:]
		n++
	}
	return n, nil
}

func (f *fakeDev) Write(bufs [][]byte, offset int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, bufs)
	for i, b := range bufs {
		if f.writeMax > 0 && i == f.writeMax {
			return i, f.writeErr
		}
		f.written = append(f.written, append([]byte(nil), b[offset:]...))
	}
	return len(bufs), nil
}

func (f *fakeDev) File() *os.File           { return nil }
func (f *fakeDev) MTU() (int, error)        { return 1420, nil }
func (f *fakeDev) Name() (string, error)    { return "fake0", nil }
func (f *fakeDev) Events() <-chan tun.Event { return f.events }
func (f *fakeDev) Close() error             { close(f.events); return nil }
func (f *fakeDev) BatchSize() int           { return 128 }

// --- packets ---

const (
	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17
)

// ipPacket builds an IPv4 or IPv6 packet around l4, filling in the IPv4
// header checksum and the TCP/UDP/ICMPv6 checksum.
func ipPacket(src, dst string, proto uint8, l4 []byte) []byte {
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	l4 = append([]byte(nil), l4...)
	var p []byte
	if s.Is4() {
		p = make([]byte, 20, 20+len(l4))
		p[0] = 0x45
		binary.BigEndian.PutUint16(p[2:], uint16(20+len(l4)))
		p[8], p[9] = 64, proto
		copy(p[12:], s.AsSlice())
		copy(p[16:], d.AsSlice())
		binary.BigEndian.PutUint16(p[10:], packet.Checksum(packet.Sum(p, 0)))
	} else {
		p = make([]byte, 40, 40+len(l4))
		p[0] = 0x60
		binary.BigEndian.PutUint16(p[4:], uint16(len(l4)))
		p[6], p[7] = proto, 64
		copy(p[8:], s.AsSlice())
		copy(p[24:], d.AsSlice())
	}
	if off := l4CsumOff(proto, s.Is4()); off >= 0 {
		if proto == protoUDP {
			binary.BigEndian.PutUint16(l4[4:], uint16(len(l4)))
		}
		binary.BigEndian.PutUint16(l4[off:], 0)
		binary.BigEndian.PutUint16(l4[off:], packet.Checksum(packet.Sum(l4, pseudo(p, proto, len(l4)))))
	}
	return append(p, l4...)
}

func l4CsumOff(proto uint8, v4 bool) int {
	switch {
	case proto == protoTCP:
		return 16
	case proto == protoUDP:
		return 6
	case proto == 58 && !v4:
		return 2
	case proto == protoICMP && v4:
		return 2
	}
	return -1
}

func pseudo(ip []byte, proto uint8, n int) uint64 {
	if proto == protoICMP {
		return 0
	}
	if ip[0]>>4 == 4 {
		return packet.Sum(ip[12:20], 0) + uint64(proto) + uint64(n)
	}
	return packet.Sum(ip[8:40], 0) + uint64(proto) + uint64(n)
}

// valid reports whether a simple packet (no extension headers) has valid
// IPv4 header and upper-layer checksums.
func valid(p []byte) bool {
	v4 := p[0]>>4 == 4
	hl, proto := 40, p[6]
	if v4 {
		hl, proto = 20, p[9]
		if packet.Checksum(packet.Sum(p[:20], 0)) != 0 {
			return false
		}
	}
	l4 := p[hl:]
	if l4CsumOff(proto, v4) < 0 {
		return true
	}
	return packet.Checksum(packet.Sum(l4, pseudo(p, proto, len(l4)))) == 0
}

func udp(payload int) []byte { return make([]byte, 8+payload) }

// tcpSYN is a SYN (ack=true: SYN-ACK) with an MSS option.
func tcpSYN(mss uint16, ack bool) []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint16(b[0:], 40000)
	binary.BigEndian.PutUint16(b[2:], 80)
	b[12] = 6 << 4
	b[13] = 0x02
	if ack {
		b[13] |= 0x10
	}
	b[20], b[21] = 2, 4
	binary.BigEndian.PutUint16(b[22:], mss)
	return b
}

func icmpErr(typ byte, quote []byte) []byte {
	b := make([]byte, 8+len(quote))
	b[0] = typ
	copy(b[8:], quote)
	return b
}

func addrs(p []byte) (src, dst netip.Addr) {
	if p[0]>>4 == 4 {
		s, _ := netip.AddrFromSlice(p[12:16])
		d, _ := netip.AddrFromSlice(p[16:20])
		return s, d
	}
	s, _ := netip.AddrFromSlice(p[8:24])
	d, _ := netip.AddrFromSlice(p[24:40])
	return s, d
}
