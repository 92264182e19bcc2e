package packet

import (
	"encoding/binary"
	"net/netip"
)

// RewriteForeignICMPSource handles ICMP errors raised by a node or router
// behind the relay, whose address the peer would reject (it is not among the
// prefixes the peer routes to us). When pkt is an ICMP or ICMPv6 error whose
// source is outside local, the source becomes relay4 or relay6 (by family)
// and the checksums are fixed. It reports whether pkt changed; a malformed
// packet, a non-error, a local source or an invalid relay address of the
// packet's family leave pkt untouched.
func RewriteForeignICMPSource(pkt []byte, local *Set, relay4, relay6 netip.Addr) bool {
	var h Header
	if err := h.parse(pkt, false); err != nil {
		return false
	}
	return RewriteForeignICMPSourceParsed(pkt, &h, local, relay4, relay6)
}

// RewriteForeignICMPSourceParsed is RewriteForeignICMPSource for a packet
// already parsed: h must be what Parse returned for pkt.
func RewriteForeignICMPSourceParsed(pkt []byte, h *Header, local *Set, relay4, relay6 netip.Addr) bool {
	if !h.HasL4() {
		return false
	}
	l4 := h.L4Bytes(pkt)
	if len(l4) < 4 || !isICMPError(h.Version, h.Proto, l4[0]) {
		return false
	}
	src := h.Src(pkt)
	if local.ContainsBytes(src) {
		return false
	}
	var d uint64
	if h.Version == 4 {
		if !relay4.Is4() {
			return false
		}
		old := binary.BigEndian.Uint32(src)
		nw := addr4(relay4)
		binary.BigEndian.PutUint32(src, nw)
		d = delta32(old, nw)
		updateAt(pkt, 10, d)
		return true // the ICMPv4 checksum does not cover the addresses
	}
	if !relay6.Is6() || relay6.Is4In6() {
		return false
	}
	nw := addr6(relay6)
	hi, lo := binary.BigEndian.Uint64(src), binary.BigEndian.Uint64(src[8:])
	binary.BigEndian.PutUint64(src, nw.hi)
	binary.BigEndian.PutUint64(src[8:], nw.lo)
	d = delta64(hi, nw.hi) + delta64(lo, nw.lo)
	updateAt(l4, 2, d)
	return true
}
