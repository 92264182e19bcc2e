package packet

import (
	"encoding/binary"
	"errors"
)

// Errors returned for packets the router cannot handle. They are sentinels,
// returned unwrapped on the hot path so that nothing allocates.
var (
	// ErrMalformed: a header is truncated or inconsistent with its lengths.
	ErrMalformed = errors.New("router: malformed packet")
	// ErrVersion: the IP version nibble is neither 4 nor 6.
	ErrVersion = errors.New("router: not an IPv4 or IPv6 packet")
)

// IP protocol numbers used by the router.
const (
	ProtoICMP   = 1
	ProtoTCP    = 6
	ProtoUDP    = 17
	ProtoICMPv6 = 58

	protoHopByHop = 0
	protoRouting  = 43
	protoFragment = 44
	protoDestOpts = 60
)

const (
	ipv4MinHeader = 20
	ipv6Header    = 40
)

// Header is a view of an IP packet's headers, as offsets into the packet it
// was parsed from. It holds no reference to the packet.
type Header struct {
	Version uint8 // 4 or 6
	// Proto is the upper-layer protocol: for IPv6 the next header after the
	// hop-by-hop, routing, destination options and fragment headers.
	Proto uint8
	// L4 is the offset of the upper-layer header (after IPv6 extension
	// headers). For a non-first fragment it is where the fragment's data begins.
	L4 int
	// End is the end of the IP packet as its length fields say; bytes from
	// End to the end of the buffer are padding and are never touched.
	End int
	// Fragmented is set when the packet is one fragment of a larger datagram.
	Fragmented bool
	// FragOffset is the fragment offset in 8-byte units (0 for the first
	// fragment or an unfragmented packet).
	FragOffset uint16
	// Truncated is set by parseEmbedded when the length fields claim more
	// bytes than were present (the packet quoted inside an ICMP error).
	Truncated bool
}

// AddrLen is 4 for IPv4 and 16 for IPv6.
func (h *Header) AddrLen() int {
	if h.Version == 4 {
		return 4
	}
	return 16
}

// SrcOff is the offset of the source address.
func (h *Header) SrcOff() int {
	if h.Version == 4 {
		return 12
	}
	return 8
}

// DstOff is the offset of the destination address.
func (h *Header) DstOff() int {
	if h.Version == 4 {
		return 16
	}
	return 24
}

// Src returns the source address bytes of pkt (which h was parsed from).
func (h *Header) Src(pkt []byte) []byte {
	o := h.SrcOff()
	return pkt[o : o+h.AddrLen() : o+h.AddrLen()]
}

// Dst returns the destination address bytes of pkt (which h was parsed from).
func (h *Header) Dst(pkt []byte) []byte {
	o := h.DstOff()
	return pkt[o : o+h.AddrLen() : o+h.AddrLen()]
}

// FirstFragment reports whether the packet carries the upper-layer header,
// that is, it is unfragmented or the first fragment.
func (h *Header) FirstFragment() bool { return h.FragOffset == 0 }

// HasL4 reports whether the upper-layer header starts inside the packet.
func (h *Header) HasL4() bool { return h.FragOffset == 0 && h.L4 < h.End }

// L4Bytes returns the upper-layer bytes of pkt: from L4 to End.
func (h *Header) L4Bytes(pkt []byte) []byte { return pkt[h.L4:h.End:h.End] }

// Parse parses the IPv4 or IPv6 headers of pkt. It fails if the headers are
// truncated or the length fields claim more bytes than pkt holds.
func Parse(pkt []byte) (h Header, err error) {
	err = h.parse(pkt, false)
	return h, err
}

// Parse fills h from pkt, like the function Parse, without copying a
// Header value (for callers on the hot path).
func (h *Header) Parse(pkt []byte) error {
	return h.parse(pkt, false)
}

// parseEmbedded parses the packet quoted inside an ICMP error: length fields
// may claim more than is present; Truncated then reports it and End is
// clipped to len(pkt). The fixed IP header itself must be complete.
func (h *Header) parseEmbedded(pkt []byte) error {
	return h.parse(pkt, true)
}

// parse fills h in place (the hot path avoids copying Header values).
func (h *Header) parse(pkt []byte, lenient bool) error {
	if len(pkt) < 1 {
		return ErrMalformed
	}
	switch pkt[0] >> 4 {
	case 4:
		return h.parse4(pkt, lenient)
	case 6:
		return h.parse6(pkt, lenient)
	}
	return ErrVersion
}

// set assigns every field. Field by field, not as a composite literal: the
// literal is built on the stack and copied, which costs more than parsing.
func (h *Header) set(version, proto uint8, l4, end int, fragmented bool, fragOffset uint16, truncated bool) {
	h.Version, h.Proto, h.L4, h.End = version, proto, l4, end
	h.Fragmented, h.FragOffset, h.Truncated = fragmented, fragOffset, truncated
}

func (h *Header) parse4(pkt []byte, lenient bool) error {
	if len(pkt) < ipv4MinHeader {
		return ErrMalformed
	}
	ihl := int(pkt[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(pkt[2:]))
	if ihl < ipv4MinHeader || ihl > len(pkt) || total < ihl {
		return ErrMalformed
	}
	end, truncated := total, false
	if total > len(pkt) {
		if !lenient {
			return ErrMalformed
		}
		end, truncated = len(pkt), true
	}
	ff := binary.BigEndian.Uint16(pkt[6:])
	fo := ff & 0x1fff
	h.set(4, pkt[9], ihl, end, ff&0x2000 != 0 || fo != 0, fo, truncated)
	return nil
}

func (h *Header) parse6(pkt []byte, lenient bool) error {
	if len(pkt) < ipv6Header {
		return ErrMalformed
	}
	end, truncated := ipv6Header+int(binary.BigEndian.Uint16(pkt[4:])), false
	if end > len(pkt) {
		if !lenient {
			return ErrMalformed
		}
		end, truncated = len(pkt), true
	}
	var fragmented bool
	var fo uint16
	nh, off := pkt[6], ipv6Header
walk:
	for {
		switch nh {
		case protoHopByHop, protoRouting, protoDestOpts:
			if off+2 > end {
				break walk
			}
			n := (int(pkt[off+1]) + 1) * 8
			if off+n > end {
				break walk
			}
			nh, off = pkt[off], off+n
		case protoFragment:
			if off+8 > end {
				break walk
			}
			fragmented = true
			fo = binary.BigEndian.Uint16(pkt[off+2:]) >> 3
			nh, off = pkt[off], off+8
			if fo != 0 {
				// The rest is fragment data, not headers.
				h.set(6, nh, off, end, true, fo, truncated)
				return nil
			}
		default:
			h.set(6, nh, off, end, fragmented, 0, truncated)
			return nil
		}
	}
	// An extension header does not fit. In a quoted packet that is
	// truncation: there is no upper-layer header.
	if !lenient {
		return ErrMalformed
	}
	h.set(6, nh, end, end, fragmented, fo, true)
	return nil
}

// isICMPError reports whether an ICMP (v4) or ICMPv6 message type is an
// error that quotes the offending packet.
func isICMPError(version uint8, proto uint8, typ byte) bool {
	if version == 4 {
		// Destination unreachable (incl. fragmentation needed), time
		// exceeded, parameter problem.
		return proto == ProtoICMP && (typ == 3 || typ == 11 || typ == 12)
	}
	// Destination unreachable, packet too big, time exceeded, parameter problem.
	return proto == ProtoICMPv6 && typ >= 1 && typ <= 4
}

// icmpErrorBody is the offset of the quoted packet within an ICMP error.
const icmpErrorBody = 8
