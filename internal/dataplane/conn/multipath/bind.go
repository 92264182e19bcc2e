package multipath

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.zx2c4.com/wireguard/conn"
)

var (
	_ conn.Bind     = (*Bind)(nil)
	_ conn.Endpoint = (*PeerEndpoint)(nil)
)

// ErrNoPath is returned by Send for a peer that has no path (unknown,
// removed, or configured with none).
var ErrNoPath = errors.New("bind: peer has no path")

// endpointPrefix marks a logical peer endpoint in the UAPI.
const endpointPrefix = "peer:"

// EndpointString is what the shell writes as endpoint= in wireguard-go's
// UAPI for peer; ParseEndpoint maps it back to the peer's *PeerEndpoint.
func EndpointString(peer string) string { return endpointPrefix + peer }

// Path is one way to reach a peer, resolved by the shell.
type Path struct {
	Name string
	Addr netip.AddrPort
}

// Bind is a conn.Bind that routes each peer's traffic over its active path.
// It wraps an inner bind (udpbind.New() in production) that owns the
// sockets. All methods are safe for concurrent use.
type Bind struct {
	inner conn.Bind

	mu    sync.Mutex                       // serialises control-plane writes below
	peers atomic.Pointer[map[string]*peer] // copy-on-write
	index atomic.Pointer[map[uint32]*peer] // copy-on-write: our session index -> peer

	probe   atomic.Pointer[ProbeHandler]
	isProbe atomic.Pointer[func([]byte) bool]
	closed  atomic.Bool
	clock   atomic.Pointer[clockState]
	sleeper atomic.Pointer[func(time.Duration)]

	// secret signs the marks of received messages (authrx.go): random,
	// never 0, fixed for the bind's life, never sent.
	secret uint64
}

// New wraps inner. The bind starts closed; wireguard-go opens it.
func New(inner conn.Bind) *Bind {
	b := &Bind{inner: inner, secret: newSecret()}
	b.SetProbePredicate(nil)
	b.SetClock(nil)
	return b
}

// newSecret returns a random, non-zero mark secret.
func newSecret() uint64 {
	var s [8]byte
	for {
		_, _ = rand.Read(s[:]) // crypto/rand.Read never fails (it crashes the program instead)
		if v := binary.LittleEndian.Uint64(s[:]); v != 0 {
			return v
		}
	}
}

// defaultIsProbe matches the health probe wire format: first byte 0xF1,
// which is no WireGuard message type.
func defaultIsProbe(pkt []byte) bool { return len(pkt) > 0 && pkt[0] == 0xF1 }

// SetProbePredicate sets how probe datagrams are recognised; nil restores
// the default (first byte 0xF1). It must not match WireGuard messages
// (first byte 1 to 4).
func (b *Bind) SetProbePredicate(f func([]byte) bool) {
	if f == nil {
		f = defaultIsProbe
	}
	b.isProbe.Store(&f)
}

// ProbeHandler receives a probe datagram on a receive goroutine. It must
// not block and must copy what it keeps. What it adds to out (answers) is
// sent when the received batch has been looked at, all in one batch.
type ProbeHandler func(pkt []byte, from netip.AddrPort, out *Outbox)

// SetProbeHandler sets the function that receives probe datagrams. Probes
// are hidden from WireGuard whether or not a handler is set. nil removes it.
func (b *Bind) SetProbeHandler(h ProbeHandler) {
	if h == nil {
		b.probe.Store(nil)
		return
	}
	b.probe.Store(&h)
}

// Open opens the inner bind and wraps its receive functions.
func (b *Bind) Open(port uint16) ([]conn.ReceiveFunc, uint16, error) {
	fns, actual, err := b.inner.Open(port)
	if err != nil {
		return nil, 0, err
	}
	b.closed.Store(false)
	wrapped := make([]conn.ReceiveFunc, len(fns))
	for i, fn := range fns {
		wrapped[i] = b.wrapReceive(fn)
	}
	return wrapped, actual, nil
}

// Close closes the inner bind; receive functions then return net.ErrClosed.
func (b *Bind) Close() error {
	b.closed.Store(true)
	return b.inner.Close()
}

// SetMark passes the fwmark to the inner bind.
func (b *Bind) SetMark(mark uint32) error { return b.inner.SetMark(mark) }

// BatchSize is the inner bind's.
func (b *Bind) BatchSize() int { return b.inner.BatchSize() }

// ParseEndpoint maps "peer:NAME" to that peer's *PeerEndpoint, creating a
// pathless peer if SetPeer has not been called yet; anything else is parsed
// by the inner bind.
func (b *Bind) ParseEndpoint(s string) (conn.Endpoint, error) {
	if name, ok := strings.CutPrefix(s, endpointPrefix); ok {
		if name == "" {
			return nil, fmt.Errorf("bind: endpoint %q: empty peer name", s)
		}
		return b.peerFor(name).ep, nil
	}
	return b.inner.ParseEndpoint(s)
}

// Send sends bufs to ep. For a *PeerEndpoint the packets go to the peer's
// active path; any other endpoint (a received one, for cookie replies) is
// passed through to the inner bind.
func (b *Bind) Send(bufs [][]byte, ep conn.Endpoint) error {
	pe, ok := ep.(*PeerEndpoint)
	if !ok {
		return b.inner.Send(bufs, ep)
	}
	p := pe.p
	r := p.route.Load()
	if r == nil {
		return fmt.Errorf("bind: send to %q: %w", p.name, ErrNoPath)
	}
	if p.holding(bufs) {
		// wireguard-go sends an initiation alone; dropping it is what a
		// lossy path would do, and its retry timer runs as usual. It
		// comes first: a dropped message must not wait for a move.
		return nil
	}
	if r.pend != nil {
		r = b.flowletStep(p, r)
	}
	if r.eps[r.active] == nil {
		return fmt.Errorf("bind: send to %q: %w", p.name, ErrNoPath)
	}
	var n, data, dataBytes uint64
	for _, buf := range bufs {
		n += uint64(len(buf))
		if isTransport(buf) {
			if len(buf) > minTransportSize {
				data++
			}
			dataBytes += uint64(len(buf))
		} else if idx, ok := handshakeSenderIndex(buf); ok {
			b.learn(p, idx)
		}
	}
	p.tx.Add(n)
	p.txData.Add(data)
	err := b.inner.Send(bufs, r.eps[r.active])
	p.lastTx.Store(b.nanos())
	if r.secondary >= 0 && r.eps[r.secondary] != nil && dataBytes > 0 {
		b.sendCopies(p, bufs, r.eps[r.secondary], dataBytes, n)
	}
	return err
}

// sendCopies sends the transport messages of bufs to ep, the secondary
// path, best effort: a failure there must not fail the send WireGuard
// made, which the active path carried.
func (b *Bind) sendCopies(p *peer, bufs [][]byte, ep conn.Endpoint, dataBytes, total uint64) {
	copies := bufs
	if dataBytes != total {
		copies = make([][]byte, 0, len(bufs)) // a handshake in the batch: rare
		for _, buf := range bufs {
			if isTransport(buf) {
				copies = append(copies, buf)
			}
		}
	}
	if b.inner.Send(copies, ep) == nil {
		p.dupPkts.Add(uint64(len(copies)))
		p.dupBytes.Add(dataBytes)
	}
}

// SendTo sends one raw datagram (a probe or probe reply) to an address on
// the same socket WireGuard uses, so it shares the path's 5-tuple.
func (b *Bind) SendTo(pkt []byte, to netip.AddrPort) error {
	if b.closed.Load() {
		return net.ErrClosed
	}
	ep, err := b.endpointTo(to)
	if err != nil {
		return fmt.Errorf("bind: send to %v: %w", to, err)
	}
	if err := b.inner.Send([][]byte{pkt}, ep); err != nil {
		return fmt.Errorf("bind: send to %v: %w", to, err)
	}
	return nil
}

// errClosed is what sends on a closed bind return.
var errClosed = net.ErrClosed

// endpointTo returns the inner bind's endpoint for to. For the standard
// bind and udpbind it builds what their ParseEndpoint would return,
// without formatting and parsing the address for every probe.
func (b *Bind) endpointTo(to netip.AddrPort) (conn.Endpoint, error) {
	switch inner := b.inner.(type) {
	case *conn.StdNetBind:
		return &conn.StdNetEndpoint{AddrPort: to}, nil
	case interface {
		EndpointFor(netip.AddrPort) conn.Endpoint
	}:
		return inner.EndpointFor(to), nil
	}
	return b.inner.ParseEndpoint(to.String())
}

// addrOf returns an endpoint's destination, without formatting it for the
// endpoints we know.
func addrOf(ep conn.Endpoint) netip.AddrPort {
	switch e := ep.(type) {
	case *conn.StdNetEndpoint:
		return e.AddrPort
	case interface{ DstAddrPort() netip.AddrPort }:
		return e.DstAddrPort()
	case nil:
		return netip.AddrPort{}
	}
	ap, _ := netip.ParseAddrPort(ep.DstToString())
	return ap
}
