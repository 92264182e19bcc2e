package netstack

import (
	"fmt"
	"net/netip"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
)

func (n *Netstack) setup(addrs []netip.Prefix, tuning nsTuning) error {
	if err := tuning.apply(n.stack); err != nil {
		return err
	}
	if err := nsErr("CreateNIC", n.stack.CreateNICWithOptions(nsNICID, n.ep, stack.NICOptions{Name: nsName})); err != nil {
		return err
	}
	// Promiscuous: accept packets to any destination (the exported ones);
	// spoofing: reply from them.
	if err := nsErr("SetPromiscuousMode", n.stack.SetPromiscuousMode(nsNICID, true)); err != nil {
		return err
	}
	if err := nsErr("SetSpoofing", n.stack.SetSpoofing(nsNICID, true)); err != nil {
		return err
	}
	for i, p := range addrs {
		if !p.IsValid() {
			return fmt.Errorf("netstack: Addresses[%d]: invalid prefix", i)
		}
		a := p.Addr().Unmap()
		proto := ipv4.ProtocolNumber
		if a.Is6() {
			proto = ipv6.ProtocolNumber
		}
		pa := tcpip.ProtocolAddress{
			Protocol:          proto,
			AddressWithPrefix: tcpip.AddressWithPrefix{Address: tcpip.AddrFromSlice(a.AsSlice()), PrefixLen: p.Bits()},
		}
		if err := nsErr(fmt.Sprintf("AddProtocolAddress(%s)", p), n.stack.AddProtocolAddress(nsNICID, pa, stack.AddressProperties{})); err != nil {
			return err
		}
		n.own = append(n.own, a)
	}
	// Everything leaves through the one NIC: WireGuard decides the peer.
	n.stack.SetRouteTable([]tcpip.Route{
		{Destination: header.IPv4EmptySubnet, NIC: nsNICID},
		{Destination: header.IPv6EmptySubnet, NIC: nsNICID},
	})
	tcpFwd := tcp.NewForwarder(n.stack, tuning.forwarderRcvWnd, nsTCPMaxInFlight, n.forwardTCP)
	n.stack.SetTransportProtocolHandler(tcp.ProtocolNumber, n.demux(tcpFwd.HandlePacket))
	udpFwd := udp.NewForwarder(n.stack, n.forwardUDP)
	n.stack.SetTransportProtocolHandler(udp.ProtocolNumber, n.demux(udpFwd.HandlePacket))
	return nil
}

// demux wraps a forwarder: it sees only packets no endpoint claimed.
// Returning false makes the stack answer as for a closed port (TCP RST, ICMP
// port unreachable): that is right for own addresses without a listener and
// for destinations that are not exported.
func (n *Netstack) demux(fwd func(stack.TransportEndpointID, *stack.PacketBuffer) bool) func(stack.TransportEndpointID, *stack.PacketBuffer) bool {
	return func(id stack.TransportEndpointID, pkt *stack.PacketBuffer) bool {
		dst := nsAddr(id.LocalAddress)
		if n.isOwn(dst) || !n.isExported(dst) {
			return false
		}
		return fwd(id, pkt)
	}
}

func nsErr(op string, err tcpip.Error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("netstack: %s: %s", op, err)
}

func nsAddr(a tcpip.Address) netip.Addr {
	ip, _ := netip.AddrFromSlice(a.AsSlice())
	return ip
}

func (n *Netstack) isOwn(a netip.Addr) bool {
	for _, o := range n.own {
		if o == a {
			return true
		}
	}
	return false
}

func (n *Netstack) isExported(a netip.Addr) bool {
	for _, p := range n.exports {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
