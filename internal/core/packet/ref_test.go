package packet

// A deliberately naive reference translator: find the mapping by linear
// scan over netip prefixes, rewrite the addresses, then recompute every
// checksum from scratch. It only handles complete (unfragmented) datagrams;
// fragments are compared by fragmenting its output.

import (
	"encoding/binary"
	"net/netip"
)

// naiveMap maps a by the first mapping containing it (Real when out).
func naiveMap(ms []Mapping, a netip.Addr, out bool) (netip.Addr, bool) {
	for _, m := range ms {
		from, to := m.As, m.Real
		if out {
			from, to = m.Real, m.As
		}
		if !from.Contains(a) {
			continue
		}
		ab, tb := a.AsSlice(), to.Masked().Addr().AsSlice()
		for i := range ab {
			bit := i * 8
			switch {
			case bit+8 <= to.Bits():
				ab[i] = tb[i]
			case bit < to.Bits():
				keep := byte(0xff) >> (to.Bits() - bit)
				ab[i] = tb[i]&^keep | ab[i]&keep
			}
		}
		r, _ := netip.AddrFromSlice(ab)
		return r, true
	}
	return a, false
}

// naiveHeaders walks a datagram built by pktgen_test.go: returns the upper
// layer offset, protocol and end. ok is false if it cannot.
func naiveHeaders(p []byte) (l4 int, proto uint8, end int, ok bool) {
	if len(p) < 20 {
		return 0, 0, 0, false
	}
	if p[0]>>4 == 4 {
		ihl := int(p[0]&0xf) * 4
		end = int(binary.BigEndian.Uint16(p[2:]))
		if end > len(p) {
			end = len(p)
		}
		return ihl, p[9], end, ihl <= end
	}
	if len(p) < 40 {
		return 0, 0, 0, false
	}
	end = 40 + int(binary.BigEndian.Uint16(p[4:]))
	if end > len(p) {
		end = len(p)
	}
	nh, off := p[6], 40
	for nh == protoHopByHop || nh == protoDestOpts {
		if off+8 > end {
			return 0, 0, 0, false
		}
		nh, off = p[off], off+(int(p[off+1])+1)*8
	}
	return off, nh, end, off <= end
}

func addrsOf(p []byte) (src, dst []byte) {
	if p[0]>>4 == 4 {
		return p[12:16], p[16:20]
	}
	return p[8:24], p[24:40]
}

func setAddr(b []byte, a netip.Addr) { copy(b, a.AsSlice()) }

func bytesAddr(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a
}

// refTranslate returns a translated copy of the complete datagram p.
func refTranslate(ms []Mapping, p []byte, out bool) []byte {
	p = append([]byte(nil), p...)
	v4 := p[0]>>4 == 4
	src, dst := addrsOf(p)
	outer := dst
	if out {
		outer = src
	}
	if a, ok := naiveMap(ms, bytesAddr(outer), out); ok {
		setAddr(outer, a)
	}
	l4off, proto, end, _ := naiveHeaders(p)
	l4 := p[l4off:end]
	if (proto == ProtoICMP || proto == ProtoICMPv6) && isICMPError(p[0]>>4, proto, l4[0]) {
		emb := l4[8:]
		esrc, edst := addrsOf(emb)
		inner := esrc
		if out {
			inner = edst
		}
		if a, ok := naiveMap(ms, bytesAddr(inner), out); ok {
			setAddr(inner, a)
		}
		eoff, eproto, eend, _ := naiveHeaders(emb)
		var total int
		if v4 {
			ihl := int(emb[0]&0xf) * 4
			binary.BigEndian.PutUint16(emb[10:], ipChecksum(emb[:ihl]))
			total = int(binary.BigEndian.Uint16(emb[2:]))
		} else {
			total = 40 + int(binary.BigEndian.Uint16(emb[4:]))
		}
		if total <= len(emb) { // complete quote: recompute its L4 checksum
			fillL4Sum(v4, esrc, edst, eproto, emb[eoff:eend])
		}
	}
	fillL4Sum(v4, src, dst, proto, l4)
	if v4 {
		binary.BigEndian.PutUint16(p[10:], ipChecksum(p[:int(p[0]&0xf)*4]))
	}
	return p
}

// checksumsValid verifies the checksums of a complete datagram built by
// pktgen_test.go, including a complete quoted packet in an ICMP error.
func checksumsValid(p []byte) bool {
	l4off, proto, end, ok := naiveHeaders(p)
	if !ok {
		return false
	}
	v4 := p[0]>>4 == 4
	if v4 && fold(Sum(p[:l4off], 0)) != 0xffff {
		return false
	}
	src, dst := addrsOf(p)
	if !l4Valid(v4, src, dst, proto, p[l4off:end]) {
		return false
	}
	l4 := p[l4off:end]
	if (proto == ProtoICMP || proto == ProtoICMPv6) && len(l4) > 8 && isICMPError(p[0]>>4, proto, l4[0]) {
		emb := l4[8:]
		eoff, eproto, eend, ok := naiveHeaders(emb)
		if !ok {
			return false
		}
		if v4 && fold(Sum(emb[:eoff], 0)) != 0xffff {
			return false
		}
		total := 40 + int(binary.BigEndian.Uint16(emb[4:]))
		if v4 {
			total = int(binary.BigEndian.Uint16(emb[2:]))
		}
		es, ed := addrsOf(emb)
		if total <= len(emb) && !l4Valid(v4, es, ed, eproto, emb[eoff:eend]) {
			return false
		}
	}
	return true
}

func l4Valid(v4 bool, src, dst []byte, proto uint8, l4 []byte) bool {
	off := l4ChecksumOff(proto)
	if off < 0 || len(l4) < off+2 {
		return true
	}
	if proto == ProtoUDP && binary.BigEndian.Uint16(l4[off:]) == 0 {
		return v4
	}
	var acc uint64
	if proto != ProtoICMP {
		acc = pseudoSum(src, dst, proto, len(l4))
	}
	return fold(Sum(l4, acc)) == 0xffff
}
