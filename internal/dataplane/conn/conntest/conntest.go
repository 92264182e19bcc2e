// Package conntest provides an in-memory conn.Bind for testing the
// multipath bind without sockets: datagrams are injected by the test and
// every Send is recorded.
package conntest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"golang.zx2c4.com/wireguard/conn"
)

var (
	_ conn.Bind     = (*Bind)(nil)
	_ conn.Endpoint = (*Endpoint)(nil)
)

// Endpoint is the fake bind's endpoint: just an address.
type Endpoint struct{ Addr netip.AddrPort }

// DstAddrPort returns the destination without formatting it.
func (e *Endpoint) DstAddrPort() netip.AddrPort { return e.Addr }
func (e *Endpoint) ClearSrc()                   {}
func (e *Endpoint) SrcToString() string         { return "" }
func (e *Endpoint) DstToString() string         { return e.Addr.String() }
func (e *Endpoint) DstToBytes() []byte          { b, _ := e.Addr.MarshalBinary(); return b }
func (e *Endpoint) DstIP() netip.Addr           { return e.Addr.Addr() }
func (e *Endpoint) SrcIP() netip.Addr           { return netip.Addr{} }

// Datagram is one packet and the address it came from or went to.
type Datagram struct {
	Pkt  []byte
	Addr netip.AddrPort
}

// Bind is a fake conn.Bind. Inject queues a datagram for the receive
// function; Sent returns what was sent. After Close the receive function
// and Send return net.ErrClosed, as conn.Bind requires; Open reopens it.
type Bind struct {
	batch int
	rx    chan Datagram

	mu      sync.Mutex
	open    bool
	done    chan struct{}
	sent    []Datagram
	parses  int
	mark    uint32
	SendErr error // returned by Send when set (set before use)
}

// New returns a closed fake bind whose receive function returns at most
// batch datagrams per call.
func New(batch int) *Bind {
	if batch < 1 {
		batch = 1
	}
	return &Bind{batch: batch, rx: make(chan Datagram, 1024)}
}

// Open returns one receive function. The port is echoed back, or 51820.
func (b *Bind) Open(port uint16) ([]conn.ReceiveFunc, uint16, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		return nil, 0, conn.ErrBindAlreadyOpen
	}
	b.open = true
	b.done = make(chan struct{})
	if port == 0 {
		port = 51820
	}
	return []conn.ReceiveFunc{b.receive(b.done)}, port, nil
}

func (b *Bind) receive(done chan struct{}) conn.ReceiveFunc {
	return func(bufs [][]byte, sizes []int, eps []conn.Endpoint) (int, error) {
		var d Datagram
		select {
		case <-done:
			return 0, net.ErrClosed
		case d = <-b.rx:
		}
		n := 0
		for {
			sizes[n] = copy(bufs[n], d.Pkt)
			eps[n] = &Endpoint{Addr: d.Addr}
			n++
			if n == len(bufs) || n == b.batch {
				return n, nil
			}
			select {
			case d = <-b.rx:
			default:
				return n, nil
			}
		}
	}
}

// Close makes the receive function and Send return net.ErrClosed.
func (b *Bind) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		close(b.done)
		b.open = false
	}
	return nil
}

// SetMark records the mark.
func (b *Bind) SetMark(mark uint32) error {
	b.mu.Lock()
	b.mark = mark
	b.mu.Unlock()
	return nil
}

// Mark returns the last mark set.
func (b *Bind) Mark() uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mark
}

// Send records copies of bufs addressed to ep, which must be an *Endpoint.
func (b *Bind) Send(bufs [][]byte, ep conn.Endpoint) error {
	e, ok := ep.(*Endpoint)
	if !ok {
		return fmt.Errorf("bindtest: send to %T: %w", ep, conn.ErrWrongEndpointType)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return net.ErrClosed
	}
	if b.SendErr != nil {
		return b.SendErr
	}
	for _, buf := range bufs {
		b.sent = append(b.sent, Datagram{Pkt: append([]byte(nil), buf...), Addr: e.Addr})
	}
	return nil
}

// ParseEndpoint parses ip:port.
func (b *Bind) ParseEndpoint(s string) (conn.Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return nil, fmt.Errorf("bindtest: %w", err)
	}
	b.mu.Lock()
	b.parses++
	b.mu.Unlock()
	return &Endpoint{Addr: ap}, nil
}

// Parses counts ParseEndpoint calls.
func (b *Bind) Parses() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.parses
}

// BatchSize is the batch given to New.
func (b *Bind) BatchSize() int { return b.batch }

// ErrFull is returned by Inject when the receive queue is full.
var ErrFull = errors.New("bindtest: receive queue full")

// Inject queues a copy of pkt as if it had arrived from from.
func (b *Bind) Inject(pkt []byte, from netip.AddrPort) error {
	select {
	case b.rx <- Datagram{Pkt: append([]byte(nil), pkt...), Addr: from}:
		return nil
	default:
		return ErrFull
	}
}

// Sent returns the datagrams sent so far and forgets them.
func (b *Bind) Sent() []Datagram {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sent
	b.sent = nil
	return s
}
