package packet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Mapping says "the peer sees our prefix Real as As". Both prefixes have the
// same family and length; host bits are kept when translating.
type Mapping struct {
	Real, As netip.Prefix
}

// Translator rewrites packets exchanged with one peer according to that
// peer's mappings. It is stateless, immutable once built and safe for
// concurrent use.
//
// Convention (see docs/translation.md): the sender picks the peer by
// destination, then Outbound rewrites the source Real -> As; the receiver
// picks the peer by source, then Inbound rewrites the destination As -> Real.
// ICMP errors quote the offending packet, which travelled the other way, so
// Outbound also rewrites the quoted destination and Inbound the quoted source.
type Translator struct {
	out *Table // Real prefixes -> mapping index (per family)
	in  *Table // As prefixes -> mapping index (per family)
	m4  []xlat4
	m6  []xlat6
}

type xlat4 struct{ mask, real, as uint32 }

type xlat6 struct{ mask, real, as u128 }

// NewTranslator validates the mappings (valid prefixes of equal family and
// length, Real prefixes pairwise disjoint, As prefixes pairwise disjoint) and
// builds a Translator.
func NewTranslator(ms []Mapping) (*Translator, error) {
	t := &Translator{}
	var out, in []Entry
	for i, m := range ms {
		if !m.Real.IsValid() || !m.As.IsValid() {
			return nil, fmt.Errorf("router: mapping %d: invalid prefix (real %v, as %v)", i, m.Real, m.As)
		}
		if m.Real.Addr().Is4() != m.As.Addr().Is4() {
			return nil, fmt.Errorf("router: mapping %d: real %v and as %v differ in address family", i, m.Real, m.As)
		}
		if m.Real.Addr().Is4In6() || m.As.Addr().Is4In6() {
			return nil, fmt.Errorf("router: mapping %d: IPv4-mapped IPv6 prefixes not supported", i)
		}
		if m.Real.Bits() != m.As.Bits() {
			return nil, fmt.Errorf("router: mapping %d: real %v and as %v differ in length", i, m.Real, m.As)
		}
		real, as := m.Real.Masked(), m.As.Masked()
		var idx int
		if real.Addr().Is4() {
			idx = len(t.m4)
			t.m4 = append(t.m4, xlat4{mask: mask4(real.Bits()), real: addr4(real.Addr()), as: addr4(as.Addr())})
		} else {
			idx = len(t.m6)
			t.m6 = append(t.m6, xlat6{mask: mask6(real.Bits()), real: addr6(real.Addr()), as: addr6(as.Addr())})
		}
		out = append(out, Entry{Prefix: real, Peer: idx})
		in = append(in, Entry{Prefix: as, Peer: idx})
	}
	if i, j, ok := firstOverlap(out); ok {
		return nil, fmt.Errorf("router: mapping %d: real %v overlaps real %v of mapping %d", j, out[j].Prefix, out[i].Prefix, i)
	}
	if i, j, ok := firstOverlap(in); ok {
		return nil, fmt.Errorf("router: mapping %d: as %v overlaps as %v of mapping %d", j, in[j].Prefix, in[i].Prefix, i)
	}
	var err error
	if t.out, err = NewTable(out); err != nil {
		return nil, fmt.Errorf("router: translator: %w", err)
	}
	if t.in, err = NewTable(in); err != nil {
		return nil, fmt.Errorf("router: translator: %w", err)
	}
	return t, nil
}

// Outbound is applied by the sender after choosing the peer by destination:
// it rewrites the source Real -> As (and, in an ICMP error, the quoted
// destination), fixing every checksum incrementally. It reports whether the
// packet changed. On error the packet is untouched.
func (t *Translator) Outbound(pkt []byte) (changed bool, err error) {
	var h Header
	if err := h.parse(pkt, false); err != nil {
		return false, err
	}
	return t.translate(pkt, &h, true)
}

// Inbound is applied by the receiver to packets from the peer: it rewrites
// the destination As -> Real (and, in an ICMP error, the quoted source),
// fixing every checksum incrementally. It reports whether the packet changed.
// On error the packet is untouched.
func (t *Translator) Inbound(pkt []byte) (changed bool, err error) {
	var h Header
	if err := h.parse(pkt, false); err != nil {
		return false, err
	}
	return t.translate(pkt, &h, false)
}

// OutboundParsed is Outbound for a packet already parsed: h must be what
// Parse returned for pkt. Translation does not change any length, so h
// stays valid for pkt afterwards.
func (t *Translator) OutboundParsed(pkt []byte, h *Header) (changed bool, err error) {
	return t.translate(pkt, h, true)
}

// InboundParsed is Inbound for a packet already parsed (see OutboundParsed).
func (t *Translator) InboundParsed(pkt []byte, h *Header) (changed bool, err error) {
	return t.translate(pkt, h, false)
}

// find returns the mapping whose source-side prefix (Real when out, As when
// in) contains the address a.
func (t *Translator) find(a []byte, out bool) (int, bool) {
	// A peer has few mappings: scanning them beats a table lookup. The
	// prefixes on each side are disjoint, so the first match is the only one.
	if len(a) == 4 && len(t.m4) <= scanLimit {
		v := binary.BigEndian.Uint32(a)
		for i := range t.m4 {
			m := &t.m4[i]
			net := m.as
			if out {
				net = m.real
			}
			if v&m.mask == net {
				return i, true
			}
		}
		return 0, false
	}
	if len(a) == 16 && len(t.m6) <= scanLimit {
		hi, lo := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(a[8:])
		for i := range t.m6 {
			m := &t.m6[i]
			net := m.as
			if out {
				net = m.real
			}
			if hi&m.mask.hi == net.hi && lo&m.mask.lo == net.lo {
				return i, true
			}
		}
		return 0, false
	}
	if out {
		return t.out.LookupBytes(a)
	}
	return t.in.LookupBytes(a)
}

// scanLimit is the number of mappings per family up to which find scans
// them linearly instead of searching the interval table.
const scanLimit = 8

// rewrite replaces the network bits of a by the other side of mapping i and
// returns the checksum delta of the change.
func (t *Translator) rewrite(a []byte, i int, out bool) uint64 {
	if len(a) == 4 {
		m := &t.m4[i]
		to := m.as
		if !out {
			to = m.real
		}
		old := binary.BigEndian.Uint32(a)
		nw := old&^m.mask | to
		binary.BigEndian.PutUint32(a, nw)
		return delta32(old, nw)
	}
	m := &t.m6[i]
	to := m.as
	if !out {
		to = m.real
	}
	hi, lo := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(a[8:])
	nhi, nlo := hi&^m.mask.hi|to.hi, lo&^m.mask.lo|to.lo
	binary.BigEndian.PutUint64(a, nhi)
	binary.BigEndian.PutUint64(a[8:], nlo)
	return delta64(hi, nhi) + delta64(lo, nlo)
}

// delta32 is the checksum delta of the two 16-bit words of old becoming nw.
func delta32(old, nw uint32) uint64 {
	return uint64(^uint16(old>>16)) + uint64(^uint16(old)) + uint64(uint16(nw>>16)) + uint64(uint16(nw))
}

// delta64 is the checksum delta of the four 16-bit words of old becoming nw.
func delta64(old, nw uint64) uint64 {
	return wordSum64(^old) + wordSum64(nw)
}

// wordSum64 adds the four 16-bit words of x (result < 2^18), pairing them
// in two 32-bit lanes first.
func wordSum64(x uint64) uint64 {
	const lanes = 0x0000ffff0000ffff
	s := x&lanes + (x>>16)&lanes
	return s&0xffffffff + s>>32
}

func (t *Translator) translate(pkt []byte, h *Header, out bool) (bool, error) {
	var outer []byte
	if out {
		outer = h.Src(pkt)
	} else {
		outer = h.Dst(pkt)
	}
	oi, oOK := t.find(outer, out)
	var l4 []byte
	if h.HasL4() {
		l4 = h.L4Bytes(pkt)
		if h.Proto == ProtoICMP || h.Proto == ProtoICMPv6 {
			return t.translateICMP(pkt, h, l4, outer, oi, oOK, out)
		}
	}
	if !oOK {
		return false, nil
	}
	// Validate everything that will be written before writing anything.
	if l4 != nil {
		switch {
		case h.Proto == ProtoTCP && len(l4) < 20, h.Proto == ProtoUDP && len(l4) < 8:
			return false, ErrMalformed
		}
	}
	d := t.rewrite(outer, oi, out) // IP header and pseudo-header delta
	if h.Version == 4 {
		updateAt(pkt, 10, d)
	}
	if l4 == nil {
		return true, nil
	}
	switch h.Proto {
	case ProtoTCP:
		updateAt(l4, 16, d)
	case ProtoUDP:
		if h.Version == 4 && binary.BigEndian.Uint16(l4[6:]) == 0 {
			break // no checksum
		}
		updateUDPAt(l4, 6, d)
	}
	return true, nil
}

// translateICMP finishes translate for ICMP and ICMPv6 messages, whose
// errors quote a packet that needs rewriting too.
func (t *Translator) translateICMP(pkt []byte, h *Header, l4, outer []byte, oi int, oOK, out bool) (bool, error) {
	if len(l4) < 4 {
		return false, ErrMalformed
	}
	var q quoted
	if isICMPError(h.Version, h.Proto, l4[0]) {
		if err := t.quote(&q, h, l4, out); err != nil {
			return false, err
		}
	}
	if !oOK && !q.ok {
		return false, nil
	}
	var d uint64
	if oOK {
		d = t.rewrite(outer, oi, out)
		if h.Version == 4 {
			updateAt(pkt, 10, d)
		}
	}
	var icmpD uint64 // ICMPv4 does not cover the pseudo-header
	if h.Proto == ProtoICMPv6 {
		icmpD = d
	}
	if q.ok {
		icmpD += t.rewriteQuoted(&q, l4, out)
	}
	if icmpD != 0 {
		updateAt(l4, 2, icmpD)
	}
	return true, nil
}

// quoted describes the packet quoted in an ICMP error.
type quoted struct {
	ok  bool // the quoted address is to be rewritten
	h   Header
	idx int // mapping index
}

// quote parses the packet quoted by the ICMP error l4 and finds whether its
// address (destination when out, source when in) is to be rewritten.
func (t *Translator) quote(q *quoted, outer *Header, l4 []byte, out bool) error {
	if len(l4) < icmpErrorBody {
		return ErrMalformed
	}
	emb := l4[icmpErrorBody:]
	eh := &q.h
	if err := eh.parseEmbedded(emb); err != nil || eh.Version != outer.Version {
		return ErrMalformed
	}
	var a []byte
	if out {
		a = eh.Dst(emb)
	} else {
		a = eh.Src(emb)
	}
	q.idx, q.ok = t.find(a, out)
	return nil
}

// rewriteQuoted rewrites the quoted packet's address and the checksums that
// cover it, and returns the delta for the enclosing ICMP checksum.
func (t *Translator) rewriteQuoted(q *quoted, l4 []byte, out bool) uint64 {
	emb := l4[icmpErrorBody:]
	eh := &q.h
	var a []byte
	if out {
		a = eh.Dst(emb)
	} else {
		a = eh.Src(emb)
	}
	d := t.rewrite(a, q.idx, out)
	icmpD := d
	if eh.Version == 4 {
		icmpD += updateAt(emb, 10, d)
	}
	icmpD += fixQuotedL4(eh, emb, d)
	return icmpD
}

// fixQuotedL4 updates the quoted packet's upper-layer checksum by d when the
// quoted datagram is complete (not truncated, not a fragment); a checksum
// over a partial datagram is left alone. It returns the delta of its write.
func fixQuotedL4(eh *Header, emb []byte, d uint64) uint64 {
	if eh.Truncated || eh.Fragmented || !eh.HasL4() {
		return 0
	}
	el4 := eh.L4Bytes(emb)
	switch eh.Proto {
	case ProtoTCP:
		if len(el4) >= 20 {
			return updateAt(el4, 16, d)
		}
	case ProtoUDP:
		if len(el4) >= 8 && (eh.Version == 6 || binary.BigEndian.Uint16(el4[6:]) != 0) {
			return updateUDPAt(el4, 6, d)
		}
	case ProtoICMPv6:
		if len(el4) >= 4 {
			return updateAt(el4, 2, d)
		}
	}
	return 0
}
