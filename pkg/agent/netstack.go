package agent

import (
	"errors"
	"net"
	"net/netip"
)

// errNeedNetstack is returned by the in-mesh socket calls of a TUN relay,
// whose local applications use the host's sockets and routes instead.
var errNeedNetstack = errors.New("agent: needs netstack mode")

// ListenTCP listens on one of this netstack relay's own overlay addresses,
// for connections from peers. The relay's shutdown aborts it.
func (a *Agent) ListenTCP(addr netip.AddrPort) (net.Listener, error) {
	if a.dp.ns == nil {
		return nil, errNeedNetstack
	}
	return a.dp.ns.ListenTCP(addr)
}

// ListenUDP binds a datagram socket on one of this netstack relay's own
// overlay addresses. The relay's shutdown aborts it.
func (a *Agent) ListenUDP(addr netip.AddrPort) (net.PacketConn, error) {
	if a.dp.ns == nil {
		return nil, errNeedNetstack
	}
	return a.dp.ns.ListenUDP(addr)
}
