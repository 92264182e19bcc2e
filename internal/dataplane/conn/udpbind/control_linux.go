package udpbind

import (
	"encoding/binary"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// controlSpace fits what one message carries: a packet info (the larger,
// IPv6 one) and a UDP segment size.
var controlSpace = unix.CmsgSpace(unix.SizeofInet6Pktinfo) + unix.CmsgSpace(4)

// control is one message's control buffer.
type control [64]byte

func init() {
	if controlSpace > len(control{}) {
		panic("udpbind: control buffer too small")
	}
}

// received is what a received message's control data says: the local
// address it arrived at, the interface, and its GRO segment size (0: not
// coalesced).
type received struct {
	dst     netip.Addr
	ifindex int32
	gso     int
}

// parseControl reads the control messages the kernel wrote.
func parseControl(b []byte) received {
	var r received
	for len(b) >= unix.SizeofCmsghdr {
		h, data, rest, err := unix.ParseOneSocketControlMessage(b)
		if err != nil {
			return r
		}
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			r.dst, r.ifindex = netip.AddrFrom4(info.Spec_dst), info.Ifindex
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			r.dst, r.ifindex = netip.AddrFrom16(info.Addr).Unmap(), int32(info.Ifindex)
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 2:
			// A u16 in older kernels, an int in newer ones: the low
			// half, in host order (little-endian here), either way.
			r.gso = int(binary.NativeEndian.Uint16(data))
		}
		b = rest
	}
	return r
}

// putControl writes the control messages of a send into c: a packet info
// for a sticky source (src valid; with the interface it arrived on, as
// StdNetBind sends it, except for an IPv6 source that is not link-local),
// a segment size for a GSO send (gso > 0). It returns their length.
func putControl(c *control, src netip.Addr, ifindex int32, gso int) int {
	n := 0
	if src.IsValid() {
		if src.Is4() {
			h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
			h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
			h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
			info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&c[unix.CmsgLen(0)]))
			*info = unix.Inet4Pktinfo{Ifindex: ifindex, Spec_dst: src.As4()}
			n = unix.CmsgSpace(unix.SizeofInet4Pktinfo)
		} else {
			h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
			h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
			h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
			info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&c[unix.CmsgLen(0)]))
			*info = unix.Inet6Pktinfo{Addr: src.As16()}
			if src.IsLinkLocalUnicast() {
				info.Ifindex = uint32(ifindex)
			}
			n = unix.CmsgSpace(unix.SizeofInet6Pktinfo)
		}
	}
	if gso > 0 {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&c[n]))
		h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
		h.SetLen(unix.CmsgLen(2))
		binary.NativeEndian.PutUint16(c[n+unix.CmsgLen(0):], uint16(gso))
		n += unix.CmsgSpace(2)
	}
	return n
}
