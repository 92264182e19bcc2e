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
	"gvisor.dev/gvisor/pkg/tcpip"
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
