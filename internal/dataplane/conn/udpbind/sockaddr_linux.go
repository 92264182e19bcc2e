package udpbind

import (
	"encoding/binary"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockaddr holds a struct sockaddr_in or sockaddr_in6.
type sockaddr [unix.SizeofSockaddrInet6]byte

// put writes ap (unmapped: IPv4 or IPv6) and returns its length.
func (sa *sockaddr) put(ap netip.AddrPort) uint32 {
	a := ap.Addr().Unmap()
	if a.Is4() {
		raw := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		raw.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&raw.Port))[:], ap.Port())
		raw.Addr = a.As4()
		raw.Zero = [8]uint8{}
		return unix.SizeofSockaddrInet4
	}
	raw := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
	raw.Family = unix.AF_INET6
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&raw.Port))[:], ap.Port())
	raw.Flowinfo = 0
	raw.Addr = a.As16()
	raw.Scope_id = 0
	return unix.SizeofSockaddrInet6
}

// get reads the address the kernel wrote (IPv4-mapped IPv6 addresses are
// unmapped; the zone of a link-local address is not kept).
func (sa *sockaddr) get() netip.AddrPort {
	switch (*unix.RawSockaddr)(unsafe.Pointer(sa)).Family {
	case unix.AF_INET:
		raw := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&raw.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(raw.Addr), port)
	case unix.AF_INET6:
		raw := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&raw.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(raw.Addr).Unmap(), port)
	}
	return netip.AddrPort{}
}
