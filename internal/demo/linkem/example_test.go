package linkem_test

import (
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/demo/linkem"
)

// A relay reaches a peer through a 10 ms link; cutting the link blackholes
// it until it is restored.
func Example() {
	peer, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer peer.Close()
	link, err := linkem.New(peer.LocalAddr().(*net.UDPAddr).AddrPort(), linkem.Config{Delay: 10 * time.Millisecond}, nil)
	if err != nil {
		panic(err)
	}
	defer link.Close()

	relay, _ := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer relay.Close()
	relay.WriteToUDPAddrPort([]byte("hello"), link.Addr())

	buf := make([]byte, 64)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, from, _ := peer.ReadFromUDPAddrPort(buf)
	relayAddr := relay.LocalAddr().(*net.UDPAddr).AddrPort()
	fmt.Println(string(buf[:n]), "from the link's NAT:", from != relayAddr && from.Addr() == netip.MustParseAddr("127.0.0.1"))
	link.Cut(true) // e.g. a WAN outage in the demo
	link.Cut(false)
	fmt.Println("delivered:", link.Stats().ToTarget.Packets)
	// Output:
	// hello from the link's NAT: true
	// delivered: 1
}
