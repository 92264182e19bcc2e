package netstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.zx2c4.com/wireguard/tun"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv6"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
)

// Options configures a Netstack.
type Options struct {
	// Addresses are the relay's own overlay addresses. ICMP echo to them is
	// answered and local listeners (ListenTCP, ListenUDP) may bind them.
	// DialContext uses the first one of the destination's family as source.
	Addresses []netip.Prefix
	// MTU of the device; 0 means 1420, WireGuard's usual MTU.
	MTU int
	// Exports are the destinations reachable through this relay: inbound
	// TCP and UDP from peers to them is forwarded to the real destination
	// through the host network.
	Exports []netip.Prefix
	// Dial is the host-side dialer for forwarded flows; nil means a
	// net.Dialer. Tests and the demo inject one that maps addresses to
	// in-process servers.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// UDPIdleTimeout closes a forwarded UDP flow after this long without a
	// datagram in either direction; 0 means 60 s.
	UDPIdleTimeout time.Duration
	// UDPMaxFlows caps the forwarded UDP flows; 0 means 1024. See
	// udpAdmitLocked for what happens when the table is full.
	UDPMaxFlows int
	// Logger receives the device's logs; nil discards them.
	Logger *slog.Logger
}

const (
	nsNICID           = tcpip.NICID(1)
	nsDefaultMTU      = 1420
	nsDefaultUDPIdle  = 60 * time.Second
	nsDefaultUDPMax   = 1024
	nsName            = "netstack"
	nsReadBatch       = 64 // packets one Read may return; also BatchSize
	nsDialTimeout     = 10 * time.Second
	nsTCPMaxInFlight  = 1024 // concurrent half-open forwarded handshakes
	nsTCPKeepIdle     = 60 * time.Second
	nsTCPKeepInterval = 10 * time.Second
	nsTCPKeepCount    = 6
)

// Errors returned by the Netstack.
var (
	// ErrNoSourceAddress: DialContext found no own address of the
	// destination's family.
	ErrNoSourceAddress = errors.New("netstack: no own address of the destination's family")
	// ErrNotOwnAddress: a listener was asked for an address that is not one
	// of the Netstack's own addresses.
	ErrNotOwnAddress = errors.New("netstack: not an own address")
)

// Netstack is a userspace subnet router on a gVisor network stack, behind the
// tun.Device interface that WireGuard reads and writes raw IP packets through.
//
// Packets written to it (from peers) are delivered to the stack: traffic to
// the own Addresses reaches listeners made with ListenTCP/ListenUDP (else a
// TCP RST or ICMP port unreachable), traffic to Exports is forwarded to the
// real destination through Dial, and anything else is dropped. Packets the
// stack emits come out of Read.
//
// Close tears everything down and waits for every goroutine the Netstack
// started; after Close, Read and Write return os.ErrClosed and the Events
// channel is closed.
type Netstack struct {
	log     *slog.Logger
	mtu     int
	own     []netip.Addr
	exports []netip.Prefix
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
	udpIdle time.Duration
	udpMax  int
	now     func() time.Time // the clock of flow activity; tests replace it

	stack  *stack.Stack
	ep     *channel.Endpoint
	events chan tun.Event

	// ctx is cancelled by Close; it bounds dials and blocks Read.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	wg      sync.WaitGroup          // goroutines we own
	closers map[io.Closer]struct{}  // live connections to close on Close
	flows   map[*nsUDPFlow]struct{} // live forwarded UDP flows
	// udpPending counts flows admitted whose endpoint is being created;
	// udpNextScan is the earliest time a full table is scanned again for
	// flows to evict (see udpAdmitLocked).
	udpPending  int
	udpNextScan time.Time

	stats nsCounters
	close sync.Once
}

var _ tun.Device = (*Netstack)(nil)

// New builds a Netstack. It reports tun.EventUp once.
func New(opts Options) (*Netstack, error) {
	return newNetstack(opts, nsTuned)
}

func newNetstack(opts Options, tuning nsTuning) (*Netstack, error) {
	n := &Netstack{
		log:     opts.Logger,
		mtu:     opts.MTU,
		exports: append([]netip.Prefix(nil), opts.Exports...),
		dial:    opts.Dial,
		udpIdle: opts.UDPIdleTimeout,
		udpMax:  opts.UDPMaxFlows,
		now:     time.Now,
		events:  make(chan tun.Event, 1),
		closers: make(map[io.Closer]struct{}),
		flows:   make(map[*nsUDPFlow]struct{}),
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	n.log = n.log.With("component", "netstack")
	if n.mtu == 0 {
		n.mtu = nsDefaultMTU
	}
	if n.mtu < 1280 || n.mtu > 65535 {
		return nil, fmt.Errorf("netstack: MTU %d outside [1280, 65535]", n.mtu)
	}
	if n.dial == nil {
		var d net.Dialer
		n.dial = d.DialContext
	}
	if n.udpIdle <= 0 {
		n.udpIdle = nsDefaultUDPIdle
	}
	if n.udpMax <= 0 {
		n.udpMax = nsDefaultUDPMax
	}
	for i, p := range n.exports {
		if !p.IsValid() {
			return nil, fmt.Errorf("netstack: Exports[%d]: invalid prefix", i)
		}
		n.exports[i] = p.Masked()
	}

	n.stack = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, ipv6.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol, icmp.NewProtocol4, icmp.NewProtocol6},
		// HandleLocal must stay off: with a promiscuous NIC it would take
		// every inbound source address for a local one and drop the packet.
		// Consequence: a dial from this stack to its own address leaves
		// through the device instead of looping back.
		HandleLocal: false,
	})
	n.ep = channel.New(tuning.queueLen, uint32(n.mtu), "")
	if tuning.rxChecksumOffload {
		// Packets reach us from WireGuard, which has already authenticated
		// them; verifying transport checksums again only costs CPU. Outbound
		// checksums are still computed: the peer may be a kernel TUN.
		n.ep.LinkEPCapabilities |= stack.CapabilityRXChecksumOffload
	}
	if err := n.setup(opts.Addresses, tuning); err != nil {
		n.stack.Close()
		n.ep.Close()
		n.stack.Wait()
		return nil, err
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.spawn(n.reapLoop)
	n.events <- tun.EventUp
	return n, nil
}

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

// spawn runs f on a goroutine Close waits for. It returns false, without
// running f, once Close has begun.
func (n *Netstack) spawn(f func()) bool {
	if !n.enter() {
		return false
	}
	go func() {
		defer n.wg.Done()
		f()
	}()
	return true
}

// enter registers the calling goroutine with Close's wait group; the caller
// must call n.wg.Done when it returns. It fails once Close has begun.
func (n *Netstack) enter() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.wg.Add(1)
	return true
}

// track registers c to be closed by Close; untrack releases it. track closes
// c itself and returns false once Close has begun.
func (n *Netstack) track(c io.Closer) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		c.Close()
		return false
	}
	n.closers[c] = struct{}{}
	return true
}

func (n *Netstack) untrack(c io.Closer) {
	n.mu.Lock()
	delete(n.closers, c)
	n.mu.Unlock()
}

// File returns nil: the netstack has no file descriptor.
func (n *Netstack) File() *os.File { return nil }

// Name returns "netstack".
func (n *Netstack) Name() (string, error) { return nsName, nil }

// MTU returns the configured MTU.
func (n *Netstack) MTU() (int, error) { return n.mtu, nil }

// Events returns the event channel: EventUp once, closed by Close.
func (n *Netstack) Events() <-chan tun.Event { return n.events }

// BatchSize is the most packets one Read returns.
func (n *Netstack) BatchSize() int { return nsReadBatch }

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

// Close shuts the device down: it stops accepting flows, closes every
// connection it forwards, waits for its goroutines, then tears down the
// stack. It is idempotent.
func (n *Netstack) Close() error {
	n.close.Do(func() {
		n.mu.Lock()
		n.closed = true
		closers := n.closers
		n.closers = nil
		flows := n.flows
		n.flows = nil
		n.mu.Unlock()
		n.cancel()
		for c := range closers {
			c.Close()
		}
		for f := range flows {
			f.close()
		}
		// Close the stack before waiting: a forwarder goroutine may be in
		// the middle of a peer's TCP handshake (CreateEndpoint), which only
		// the stack can abort; WireGuard no longer delivers the final ACK.
		n.stack.Close()
		n.wg.Wait()
		n.stack.RemoveNIC(nsNICID)
		n.ep.Close()
		n.stack.Wait()
		close(n.events)
		n.log.Debug("closed")
	})
	return nil
}
