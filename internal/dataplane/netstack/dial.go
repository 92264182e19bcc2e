package netstack

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
)

// DialContext connects from a local application into the mesh. network is
// "tcp", "tcp4", "tcp6", "udp", "udp4" or "udp6"; address is a literal
// "ip:port" (there is no resolver inside the mesh). The source address is the
// first own address of the destination's family. Nothing is looped back
// locally: a dial to one of this stack's own addresses leaves through the
// device like any other.
func (n *Netstack) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	dst, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("netstack: dial %s %q: %w", network, address, err)
	}
	dst = netip.AddrPortFrom(dst.Addr().Unmap(), dst.Port())
	if err := nsCheckNetwork(network, dst.Addr()); err != nil {
		return nil, err
	}
	if n.ctx.Err() != nil {
		return nil, fmt.Errorf("netstack: dial %s %s: %w", network, dst, net.ErrClosed)
	}
	src, ok := n.SourceFor(dst.Addr())
	if !ok {
		return nil, fmt.Errorf("netstack: dial %s %s: %w", network, dst, ErrNoSourceAddress)
	}
	local, proto := nsFullAddr(netip.AddrPortFrom(src, 0))
	remote, _ := nsFullAddr(dst)
	switch network[:3] {
	case "tcp":
		c, err := gonet.DialTCPWithBind(ctx, n.stack, local, remote, proto)
		if err != nil {
			return nil, fmt.Errorf("netstack: dial tcp %s: %w", dst, err)
		}
		return c, nil
	default:
		c, err := gonet.DialUDP(n.stack, &local, &remote, proto)
		if err != nil {
			return nil, fmt.Errorf("netstack: dial udp %s: %w", dst, err)
		}
		return c, nil
	}
}

func nsCheckNetwork(network string, a netip.Addr) error {
	switch network {
	case "tcp", "udp":
		return nil
	case "tcp4", "udp4":
		if a.Is4() {
			return nil
		}
	case "tcp6", "udp6":
		if a.Is6() {
			return nil
		}
	default:
		return fmt.Errorf("netstack: unsupported network %q", network)
	}
	return fmt.Errorf("netstack: address %s does not match network %q", a, network)
}

// SourceFor returns the first own address of dst's family, the source of
// DialContext's connections to dst; false when there is none.
func (n *Netstack) SourceFor(dst netip.Addr) (netip.Addr, bool) {
	for _, a := range n.own {
		if a.Is4() == dst.Is4() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

func nsFullAddr(ap netip.AddrPort) (tcpip.FullAddress, tcpip.NetworkProtocolNumber) {
	proto := ipv4.ProtocolNumber
	if ap.Addr().Is6() {
		proto = ipv6.ProtocolNumber
	}
	return tcpip.FullAddress{NIC: nsNICID, Addr: tcpip.AddrFromSlice(ap.Addr().AsSlice()), Port: ap.Port()}, proto
}

func (n *Netstack) checkListen(addr netip.AddrPort) (netip.AddrPort, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if !n.isOwn(addr.Addr()) {
		return addr, fmt.Errorf("netstack: listen on %s: %w", addr, ErrNotOwnAddress)
	}
	if n.ctx.Err() != nil {
		return addr, fmt.Errorf("netstack: listen on %s: %w", addr, net.ErrClosed)
	}
	return addr, nil
}

// ListenTCP listens on one of the own overlay addresses inside the stack.
// Close on the Netstack aborts it.
func (n *Netstack) ListenTCP(addr netip.AddrPort) (net.Listener, error) {
	addr, err := n.checkListen(addr)
	if err != nil {
		return nil, err
	}
	fa, proto := nsFullAddr(addr)
	ln, err := gonet.ListenTCP(n.stack, fa, proto)
	if err != nil {
		return nil, fmt.Errorf("netstack: listen tcp %s: %w", addr, err)
	}
	return ln, nil
}

// ListenUDP binds a datagram socket on one of the own overlay addresses
// inside the stack. Close on the Netstack aborts it.
func (n *Netstack) ListenUDP(addr netip.AddrPort) (net.PacketConn, error) {
	addr, err := n.checkListen(addr)
	if err != nil {
		return nil, err
	}
	fa, proto := nsFullAddr(addr)
	c, err := gonet.DialUDP(n.stack, &fa, nil, proto)
	if err != nil {
		return nil, fmt.Errorf("netstack: listen udp %s: %w", addr, err)
	}
	return c, nil
}
