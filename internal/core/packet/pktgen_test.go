package packet

// Test-only packet construction, a naive reference translator and checksum
// verification. Nothing here is shared with the production code paths except
// the exported Sum/Checksum helpers (which are tested on their own against
// known vectors in checksum_test.go).

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
)

// dgram describes a complete datagram to build.
type dgram struct {
	src, dst netip.Addr
	proto    uint8
	l4       []byte // upper-layer bytes; checksum field filled in by build
	extHdrs  int    // IPv6: number of hop-by-hop/destination options headers
	noUDPSum bool   // IPv4 UDP: send with checksum zero
	badSum   bool   // leave the upper-layer checksum as given
}

func ipChecksum(hdr []byte) uint16 {
	binary.BigEndian.PutUint16(hdr[10:], 0)
	return Checksum(Sum(hdr, 0))
}

// pseudoSum is the pseudo-header sum for an upper-layer length n.
func pseudoSum(src, dst []byte, proto uint8, n int) uint64 {
	acc := Sum(src, 0)
	acc = Sum(dst, acc)
	return acc + uint64(proto) + uint64(n)
}

// l4ChecksumOff is the checksum offset of an upper-layer protocol, or -1.
func l4ChecksumOff(proto uint8) int {
	switch proto {
	case ProtoTCP:
		return 16
	case ProtoUDP:
		return 6
	case ProtoICMP, ProtoICMPv6:
		return 2
	}
	return -1
}

// fillL4Sum computes the upper-layer checksum of l4 from scratch.
func fillL4Sum(v4 bool, src, dst []byte, proto uint8, l4 []byte) {
	off := l4ChecksumOff(proto)
	if off < 0 || len(l4) < off+2 {
		return
	}
	if v4 && proto == ProtoUDP && binary.BigEndian.Uint16(l4[off:]) == 0 {
		return // "no checksum" stays
	}
	binary.BigEndian.PutUint16(l4[off:], 0)
	var acc uint64
	if proto != ProtoICMP {
		acc = pseudoSum(src, dst, proto, len(l4))
	}
	c := Checksum(Sum(l4, acc))
	if proto == ProtoUDP && c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(l4[off:], c)
}

func (d dgram) build() []byte {
	l4 := append([]byte(nil), d.l4...)
	if d.proto == ProtoUDP && len(l4) >= 8 {
		binary.BigEndian.PutUint16(l4[4:], uint16(len(l4)))
		if d.noUDPSum && d.src.Is4() {
			binary.BigEndian.PutUint16(l4[6:], 0)
		} else if binary.BigEndian.Uint16(l4[6:]) == 0 {
			l4[6] = 1 // any non-zero placeholder
		}
	}
	s, t := d.src.AsSlice(), d.dst.AsSlice()
	if !d.badSum {
		fillL4Sum(d.src.Is4(), s, t, d.proto, l4)
	}
	if d.src.Is4() {
		p := make([]byte, 20+len(l4))
		p[0] = 0x45
		binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
		binary.BigEndian.PutUint16(p[4:], 0x1234)
		p[8] = 64
		p[9] = d.proto
		copy(p[12:], s)
		copy(p[16:], t)
		binary.BigEndian.PutUint16(p[10:], ipChecksum(p[:20]))
		copy(p[20:], l4)
		return p
	}
	ext := d.extHdrs * 8
	p := make([]byte, 40+ext+len(l4))
	p[0] = 0x60
	binary.BigEndian.PutUint16(p[4:], uint16(ext+len(l4)))
	p[7] = 64
	copy(p[8:], s)
	copy(p[24:], t)
	next := &p[6]
	off := 40
	for i := 0; i < d.extHdrs; i++ {
		if i == 0 {
			*next = protoHopByHop
		} else {
			*next = protoDestOpts
		}
		next = &p[off]
		p[off+1] = 0 // 8 bytes
		p[off+2] = 1 // PadN
		p[off+3] = 4 // of 4 bytes
		off += 8
	}
	*next = d.proto
	copy(p[off:], l4)
	return p
}

// tcpSeg returns a TCP header (with an MSS option when mss > 0) plus payload.
func tcpSeg(r *rand.Rand, flags byte, mss int, payload int) []byte {
	hl := 20
	if mss > 0 {
		hl = 24
	}
	b := make([]byte, hl+payload)
	binary.BigEndian.PutUint16(b[0:], uint16(r.IntN(65536)))
	binary.BigEndian.PutUint16(b[2:], uint16(r.IntN(65536)))
	binary.BigEndian.PutUint32(b[4:], r.Uint32())
	b[12] = byte(hl/4) << 4
	b[13] = flags
	binary.BigEndian.PutUint16(b[14:], 65535)
	if mss > 0 {
		b[20], b[21] = tcpOptMSS, 4
		binary.BigEndian.PutUint16(b[22:], uint16(mss))
	}
	fillRand(r, b[hl:])
	return b
}

func udpDgram(r *rand.Rand, payload int) []byte {
	b := make([]byte, 8+payload)
	binary.BigEndian.PutUint16(b[0:], uint16(r.IntN(65536)))
	binary.BigEndian.PutUint16(b[2:], uint16(r.IntN(65536)))
	fillRand(r, b[8:])
	return b
}

// icmpEcho builds an echo request for v4 (type 8) or v6 (type 128).
func icmpEcho(r *rand.Rand, v4 bool, payload int) []byte {
	b := make([]byte, 8+payload)
	b[0] = 128
	if v4 {
		b[0] = 8
	}
	binary.BigEndian.PutUint32(b[4:], r.Uint32())
	fillRand(r, b[8:])
	return b
}

// icmpError builds an error message of the given type quoting quote.
func icmpError(typ, code byte, quote []byte) []byte {
	b := make([]byte, 8+len(quote))
	b[0], b[1] = typ, code
	copy(b[8:], quote)
	return b
}

func fillRand(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

// fragment splits a complete datagram so that the first fragment carries
// firstLen bytes of the fragmentable part (a multiple of 8).
func fragment(p []byte, firstLen int) [][]byte {
	if p[0]>>4 == 4 {
		ihl := int(p[0]&0x0f) * 4
		data := p[ihl:]
		mk := func(part []byte, off int, more bool) []byte {
			f := make([]byte, ihl+len(part))
			copy(f, p[:ihl])
			copy(f[ihl:], part)
			binary.BigEndian.PutUint16(f[2:], uint16(len(f)))
			ff := uint16(off / 8)
			if more {
				ff |= 0x2000
			}
			binary.BigEndian.PutUint16(f[6:], ff)
			binary.BigEndian.PutUint16(f[10:], ipChecksum(f[:ihl]))
			return f
		}
		return [][]byte{mk(data[:firstLen], 0, true), mk(data[firstLen:], firstLen, false)}
	}
	// IPv6: the unfragmentable part is the fixed header plus hop-by-hop;
	// the test builder puts at most one hop-by-hop first.
	unfrag := 40
	nextOff := 6
	if p[6] == protoHopByHop {
		nextOff = 40
		unfrag = 40 + (int(p[41])+1)*8
	}
	data := p[unfrag:]
	mk := func(part []byte, off int, more bool) []byte {
		f := make([]byte, unfrag+8+len(part))
		copy(f, p[:unfrag])
		f[nextOff] = protoFragment
		fh := f[unfrag:]
		fh[0] = p[nextOff]
		ff := uint16(off/8) << 3
		if more {
			ff |= 1
		}
		binary.BigEndian.PutUint16(fh[2:], ff)
		binary.BigEndian.PutUint32(fh[4:], 0xabcdef01)
		copy(f[unfrag+8:], part)
		binary.BigEndian.PutUint16(f[4:], uint16(len(f)-40))
		return f
	}
	return [][]byte{mk(data[:firstLen], 0, true), mk(data[firstLen:], firstLen, false)}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
