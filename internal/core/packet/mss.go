package packet

import "encoding/binary"

// TCP header fields used by ClampMSS.
const (
	tcpFlagSYN   = 0x02
	tcpOptEnd    = 0
	tcpOptNOP    = 1
	tcpOptMSS    = 2
	tcpOptMSSLen = 4
)

// ClampMSS lowers the MSS option of a TCP SYN (or SYN-ACK) to mss4 (IPv4)
// or mss6 (IPv6) when it is larger, fixing the TCP checksum incrementally.
// It reports whether pkt changed. Anything else (not TCP, not SYN, a
// non-first fragment, no MSS option, malformed) is left untouched. A limit
// <= 0 disables clamping for that family.
func ClampMSS(pkt []byte, mss4, mss6 int) bool {
	var h Header
	if err := h.parse(pkt, false); err != nil {
		return false
	}
	return ClampMSSParsed(pkt, &h, mss4, mss6)
}

// ClampMSSParsed is ClampMSS for a packet already parsed: h must be what
// Parse returned for pkt.
func ClampMSSParsed(pkt []byte, h *Header, mss4, mss6 int) bool {
	if h.Proto != ProtoTCP || !h.HasL4() {
		return false
	}
	limit := mss6
	if h.Version == 4 {
		limit = mss4
	}
	if limit <= 0 {
		return false
	}
	if limit > 0xffff {
		limit = 0xffff
	}
	tcp := h.L4Bytes(pkt)
	if len(tcp) < 20 || tcp[13]&tcpFlagSYN == 0 {
		return false
	}
	hl := int(tcp[12]>>4) * 4
	if hl < 20 || hl > len(tcp) {
		return false
	}
	opts := tcp[20:hl]
	for i := 0; i < len(opts); {
		switch opts[i] {
		case tcpOptEnd:
			return false
		case tcpOptNOP:
			i++
			continue
		}
		if i+1 >= len(opts) {
			return false
		}
		n := int(opts[i+1])
		if n < 2 || i+n > len(opts) {
			return false
		}
		if opts[i] == tcpOptMSS && n == tcpOptMSSLen {
			off := 20 + i + 2
			old := binary.BigEndian.Uint16(tcp[off:])
			if int(old) <= limit {
				return false
			}
			nw := uint16(limit)
			binary.BigEndian.PutUint16(tcp[off:], nw)
			d := uint64(^old) + uint64(nw)
			if off%2 == 0 {
				updateAt(tcp, 16, d)
			} else {
				// An MSS value at an odd offset spans two checksum words.
				updateAt(tcp, 16, oddDelta(old, nw))
			}
			return true
		}
		i += n
	}
	return false
}

// oddDelta is the checksum delta of a 16-bit value at an odd offset changing
// from old to nw: its bytes fall in the low half of one word and the high
// half of the next, which sums to the byte-swapped value.
func oddDelta(old, nw uint16) uint64 {
	swap := func(v uint16) uint16 { return v<<8 | v>>8 }
	return uint64(^swap(old)) + uint64(swap(nw))
}
