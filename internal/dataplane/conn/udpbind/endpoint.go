package udpbind

import (
	"net/netip"

	"golang.zx2c4.com/wireguard/conn"
)

var _ conn.Endpoint = (*Endpoint)(nil)

// Endpoint is a UDP destination and, for an endpoint a datagram came
// from, the local address it arrived at (its sticky source): datagrams
// sent back to it leave from that address, as a multi-homed peer expects.
//
// The segments of one GRO-coalesced message share their endpoint (they
// have one source). ClearSrc is not synchronised with sends: it is for
// the endpoint's owner, and the relay never lets WireGuard adopt a
// received endpoint (roaming is off, internal/dataplane/conn/multipath).
type Endpoint struct {
	Dst netip.AddrPort
	src netip.Addr
	// ifindex is the interface the datagram arrived on, sent along with
	// the source (putControl).
	ifindex int32
}

// NewEndpoint returns an endpoint for dst with no source.
func NewEndpoint(dst netip.AddrPort) *Endpoint {
	return &Endpoint{Dst: netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())}
}

// ClearSrc forgets the sticky source: the kernel picks one by route.
func (e *Endpoint) ClearSrc() { e.src, e.ifindex = netip.Addr{}, 0 }

// SrcIP is the sticky source, if any.
func (e *Endpoint) SrcIP() netip.Addr { return e.src }

// SrcToString formats the sticky source ("" without one).
func (e *Endpoint) SrcToString() string {
	if !e.src.IsValid() {
		return ""
	}
	return e.src.String()
}

// DstIP is the destination address.
func (e *Endpoint) DstIP() netip.Addr { return e.Dst.Addr() }

// DstAddrPort is the destination, without formatting it.
func (e *Endpoint) DstAddrPort() netip.AddrPort { return e.Dst }

// DstToString formats the destination.
func (e *Endpoint) DstToString() string { return e.Dst.String() }

// DstToBytes is the destination in the form WireGuard's cookies hash.
func (e *Endpoint) DstToBytes() []byte {
	b, _ := e.Dst.MarshalBinary()
	return b
}
