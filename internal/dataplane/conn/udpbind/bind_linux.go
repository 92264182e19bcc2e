package udpbind

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
	"golang.zx2c4.com/wireguard/conn"
)

var _ conn.Bind = (*Bind)(nil)

// batchSize is the number of datagrams a receive function fills and a
// Send takes at most: wireguard-go's ideal batch.
const batchSize = conn.IdealBatchSize

// Bind is a conn.Bind on one IPv4 and one IPv6 UDP socket sharing a port.
// All methods are safe for concurrent use.
type Bind struct {
	mu     sync.Mutex // serialises Open, Close and SetMark
	v4, v6 atomic.Pointer[socket]
	pool   sync.Pool // *sender
}

// New returns a closed Bind; wireguard-go opens it.
func New() conn.Bind {
	return &Bind{pool: sync.Pool{New: func() any { return newSender(batchSize) }}}
}

// Open opens the sockets on port (0: any free port for both) and returns
// a receive function per socket.
func (b *Bind) Open(port uint16) ([]conn.ReceiveFunc, uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.v4.Load() != nil || b.v6.Load() != nil {
		return nil, 0, conn.ErrBindAlreadyOpen
	}
	v4, v6, actual, err := openPair(port)
	if err != nil {
		return nil, 0, err
	}
	var fns []conn.ReceiveFunc
	for _, s := range []*socket{v4, v6} {
		if s != nil {
			fns = append(fns, newReceiver(s, batchSize).receive)
		}
	}
	b.v4.Store(v4)
	b.v6.Store(v6)
	return fns, actual, nil
}

// Close closes both sockets; the receive functions then return an error
// that is net.ErrClosed.
func (b *Bind) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err4 := b.v4.Swap(nil).close()
	err6 := b.v6.Swap(nil).close()
	return errors.Join(err4, err6)
}

// SetMark sets SO_MARK on the open sockets.
func (b *Bind) SetMark(mark uint32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range []*socket{b.v4.Load(), b.v6.Load()} {
		if s != nil {
			if err := s.setMark(mark); err != nil {
				return err
			}
		}
	}
	return nil
}

// BatchSize is wireguard-go's ideal batch.
func (b *Bind) BatchSize() int { return batchSize }

// ParseEndpoint parses "ip:port".
func (b *Bind) ParseEndpoint(s string) (conn.Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, fmt.Errorf("udpbind: endpoint %q: %w", s, err)
	}
	return NewEndpoint(ap), nil
}

// EndpointFor returns the endpoint for dst without formatting and
// parsing it.
func (b *Bind) EndpointFor(dst netip.AddrPort) conn.Endpoint { return NewEndpoint(dst) }

// socketFor returns the socket for a destination of a's family.
func (b *Bind) socketFor(a netip.Addr) (*socket, error) { return b.socketOf(a.Unmap().Is6()) }

// socketOf returns the IPv6 socket if v6, else the IPv4 one.
func (b *Bind) socketOf(v6 bool) (*socket, error) {
	s := b.v4.Load()
	if v6 {
		s = b.v6.Load()
	}
	if s == nil {
		if b.v4.Load() == nil && b.v6.Load() == nil {
			return nil, net.ErrClosed
		}
		return nil, syscall.EAFNOSUPPORT
	}
	return s, nil
}

// Send sends bufs to ep in one sendmmsg, as GSO messages where the kernel
// takes them. A device that cannot checksum for GSO (EIO) turns GSO off
// on that socket for good, and the rest of bufs is sent again without.
func (b *Bind) Send(bufs [][]byte, ep conn.Endpoint) error {
	var dst netip.AddrPort
	var src netip.Addr
	var ifindex int32
	switch e := ep.(type) {
	case *Endpoint:
		dst, src, ifindex = e.Dst, e.src, e.ifindex
	default:
		ap, err := netip.ParseAddrPort(ep.DstToString())
		if err != nil {
			return fmt.Errorf("udpbind: send to %q: %w", ep.DstToString(), err)
		}
		dst = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	s, err := b.socketFor(dst.Addr())
	if err != nil {
		return err
	}
	w := b.pool.Get().(*sender)
	defer b.pool.Put(w)
	for len(bufs) > 0 {
		// wireguard-go passes at most BatchSize buffers; more are sent
		// in chunks rather than refused.
		chunk := bufs[:min(len(bufs), len(w.iovs))]
		bufs = bufs[len(chunk):]
		gso := s.gso.Load()
		n := w.fillOne(chunk, dst, src, ifindex, gso)
		sent, err := w.sendmmsg(s, 0, n, false)
		if err != nil && gso && errors.Is(err, unix.EIO) {
			s.gso.Store(false)
			rest := chunk[w.covered[sent]:]
			n = w.fillOne(rest, dst, src, ifindex, false)
			_, err = w.sendmmsg(s, 0, n, false)
		}
		w.release(len(chunk))
		if err != nil {
			return fmt.Errorf("udpbind: send to %v: %w", dst, err)
		}
	}
	return nil
}

// SendBatch sends pkts[i] to dsts[i], all of them, in as few sendmmsg
// calls as the batch size allows (one per family for a batch of probes).
// A destination the kernel refuses does not stop the others; the first
// error is returned.
func (b *Bind) SendBatch(pkts [][]byte, dsts []netip.AddrPort) error {
	if len(pkts) != len(dsts) {
		return fmt.Errorf("udpbind: SendBatch: %d packets for %d destinations", len(pkts), len(dsts))
	}
	w := b.pool.Get().(*sender)
	defer b.pool.Put(w)
	var first error
	for _, v6 := range []bool{false, true} {
		for next := 0; next < len(pkts); {
			var n int
			n, next = w.fillMany(pkts, dsts, next, v6)
			if n == 0 {
				break
			}
			s, err := b.socketOf(v6)
			if err == nil {
				_, err = w.sendmmsg(s, 0, n, true)
			}
			w.release(n)
			if err != nil && first == nil {
				first = fmt.Errorf("udpbind: batch send: %w", err)
			}
		}
	}
	return first
}
