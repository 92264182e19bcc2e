package netstack

import (
	"fmt"
	"io"
	"net/netip"
	"os"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// Read blocks until the stack emits at least one packet, then returns as many
// as are queued and fit in bufs, each copied to bufs[i][offset:].
func (n *Netstack) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	if len(bufs) == 0 {
		return 0, nil
	}
	pkt := n.ep.ReadContext(n.ctx)
	if pkt == nil {
		return 0, os.ErrClosed
	}
	count := 0
	for {
		size, err := nsCopyPacket(bufs[count][offset:], pkt)
		pkt.DecRef()
		if err != nil {
			return count, err
		}
		sizes[count] = size
		count++
		if count == len(bufs) {
			return count, nil
		}
		if pkt = n.ep.Read(); pkt == nil {
			return count, nil
		}
	}
}

func nsCopyPacket(dst []byte, pkt *stack.PacketBuffer) (int, error) {
	if pkt.Size() > len(dst) {
		return 0, fmt.Errorf("netstack: packet of %d bytes into buffer of %d: %w", pkt.Size(), len(dst), io.ErrShortBuffer)
	}
	size := 0
	for _, s := range pkt.AsSlices() {
		size += copy(dst[size:], s)
	}
	return size, nil
}

// Write delivers each bufs[i][offset:] to the stack. Packets to destinations
// that are neither own nor exported, malformed packets and ICMP echo
// requests to exported (not own) destinations are dropped and counted.
func (n *Netstack) Write(bufs [][]byte, offset int) (int, error) {
	select {
	case <-n.ctx.Done():
		return 0, os.ErrClosed
	default:
	}
	for _, b := range bufs {
		if len(b) <= offset {
			continue
		}
		pkt := b[offset:]
		proto, ok := n.admit(pkt)
		if !ok {
			n.stats.filtered.Add(1)
			continue
		}
		pb := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(pkt)})
		n.ep.InjectInbound(proto, pb)
		pb.DecRef()
	}
	return len(bufs), nil
}

// admit decides whether an inbound packet may enter the stack.
func (n *Netstack) admit(pkt []byte) (tcpip.NetworkProtocolNumber, bool) {
	var dst netip.Addr
	var proto tcpip.NetworkProtocolNumber
	echo := false
	switch pkt[0] >> 4 {
	case 4:
		if len(pkt) < header.IPv4MinimumSize {
			return 0, false
		}
		dst = netip.AddrFrom4([4]byte(pkt[16:20]))
		proto = ipv4.ProtocolNumber
		ihl := int(pkt[0]&0xf) * 4
		echo = pkt[9] == uint8(header.ICMPv4ProtocolNumber) && len(pkt) > ihl && pkt[ihl] == uint8(header.ICMPv4Echo)
	case 6:
		if len(pkt) < header.IPv6MinimumSize {
			return 0, false
		}
		dst = netip.AddrFrom16([16]byte(pkt[24:40]))
		proto = ipv6.ProtocolNumber
		echo = pkt[6] == uint8(header.ICMPv6ProtocolNumber) && len(pkt) > header.IPv6MinimumSize && pkt[header.IPv6MinimumSize] == uint8(header.ICMPv6EchoRequest)
	default:
		return 0, false
	}
	if n.isOwn(dst) {
		return proto, true
	}
	// Promiscuous mode would let the stack answer echo for any accepted
	// destination, claiming a host is up when only the relay is: drop.
	return proto, !echo && n.isExported(dst)
}
