package linkem

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes the emulated link. The same settings apply to both
// directions; each direction draws its own random numbers from Seed.
type Config struct {
	Delay  time.Duration // one-way delay added to every datagram
	Jitter time.Duration // uniform in [-Jitter, +Jitter], never reorders
	Loss   float64       // probability in [0, 1] that a datagram is dropped
	Seed   int64         // seeds the loss and jitter draws
}

// maxClients bounds the upstream sockets a link opens; a relay talks to a
// link from one or two sockets, so this only guards against a runaway test.
const maxClients = 64

// socketBuffer is the receive and send buffer asked for on every socket, so
// bursts in tests are not lost in the kernel before the link sees them.
const socketBuffer = 4 << 20

// ErrClosed is returned by operations on a closed Link.
var ErrClosed = errors.New("linkem: link closed")

// DirStats counts one direction of a link.
type DirStats struct {
	Packets  uint64 // datagrams delivered
	Bytes    uint64 // payload bytes delivered
	Lost     uint64 // dropped by the Loss draw
	Cut      uint64 // dropped because the link was cut
	Overflow uint64 // dropped because the delay line was full
}

// Dropped is the total number of datagrams this direction did not deliver.
func (s DirStats) Dropped() uint64 { return s.Lost + s.Cut + s.Overflow }

// Stats counts both directions of a link.
type Stats struct {
	ToTarget DirStats // client -> target
	ToClient DirStats // target -> client
}

// Link is one emulated UDP link on loopback. Its methods are safe for
// concurrent use.
type Link struct {
	log    *slog.Logger
	target netip.AddrPort
	front  *net.UDPConn
	cut    atomic.Bool

	cfgMu sync.Mutex
	cfg   Config

	clientsMu sync.Mutex
	clients   map[netip.AddrPort]*client

	up, down *direction

	done      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once

	// decided, when set before any traffic (tests only), is called after
	// the link has decided the fate of each arriving datagram.
	decided func(toTarget bool)
}

// client is one source seen on the front socket and its upstream socket.
type client struct {
	addr netip.AddrPort
	conn *net.UDPConn
}

// direction is one delay line and its counters.
type direction struct {
	mu    sync.Mutex
	line  *line
	q     *queue
	stats DirStats
	wake  chan struct{}
}

func newDirection(seed int64, dir uint64, queue int) *direction {
	return &direction{line: newLine(seed, dir), q: newQueue(queue), wake: make(chan struct{}, 1)}
}

// New starts a link listening on 127.0.0.1:0 that forwards to target.
// Close stops it.
func New(target netip.AddrPort, cfg Config, log *slog.Logger) (*Link, error) {
	return newLink(target, cfg, log, nil, maxQueue)
}

func newLink(target netip.AddrPort, cfg Config, log *slog.Logger, decided func(bool), queue int) (*Link, error) {
	if !target.IsValid() {
		return nil, fmt.Errorf("linkem: invalid target %v", target)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	front, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)))
	if err != nil {
		return nil, fmt.Errorf("linkem: listen: %w", err)
	}
	tune(front)
	l := &Link{
		log:     log.With("component", "linkem"),
		target:  target,
		front:   front,
		cfg:     cfg,
		clients: make(map[netip.AddrPort]*client),
		up:      newDirection(cfg.Seed, 1, queue),
		down:    newDirection(cfg.Seed, 2, queue),
		done:    make(chan struct{}),
		decided: decided,
	}
	l.log = l.log.With("listen", l.Addr().String(), "target", target.String())
	l.wg.Add(3)
	go l.readFront()
	go l.deliver(l.up, true)
	go l.deliver(l.down, false)
	return l, nil
}

func tune(c *net.UDPConn) {
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
}

// Addr is the address clients send to: the path endpoint a relay uses.
func (l *Link) Addr() netip.AddrPort {
	return l.front.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Set changes the link's delay, jitter and loss at runtime. Datagrams
// already in flight keep their due time. Seed is ignored after New.
func (l *Link) Set(cfg Config) {
	l.cfgMu.Lock()
	l.cfg = cfg
	l.cfgMu.Unlock()
	l.log.Debug("link reconfigured", "delay", cfg.Delay, "jitter", cfg.Jitter, "loss", cfg.Loss)
}

// Cut blackholes both directions (true) or restores the link (false).
// Datagrams in flight when the link is cut are dropped on delivery.
func (l *Link) Cut(cut bool) {
	if l.cut.Swap(cut) != cut {
		l.log.Debug("link cut changed", "cut", cut)
	}
}

// Stats returns a snapshot of the link's counters.
func (l *Link) Stats() Stats {
	var s Stats
	l.up.mu.Lock()
	s.ToTarget = l.up.stats
	l.up.mu.Unlock()
	l.down.mu.Lock()
	s.ToClient = l.down.stats
	l.down.mu.Unlock()
	return s
}

// Close stops the link, closes its sockets and waits for its goroutines.
// Datagrams still in flight are discarded.
func (l *Link) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.front.Close()
		l.clientsMu.Lock()
		for _, c := range l.clients {
			if cerr := c.conn.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
		l.clientsMu.Unlock()
		l.wg.Wait()
	})
	return err
}

func (l *Link) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// readFront owns the front socket: datagrams from clients, toward the target.
func (l *Link) readFront() {
	defer l.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := l.front.ReadFromUDPAddrPort(buf)
		if err != nil {
			if l.closed() {
				return
			}
			l.log.Warn("front read failed", "err", err)
			continue
		}
		c, err := l.clientFor(from)
		if err != nil {
			l.log.Warn("no upstream socket for client", "client", from.String(), "err", err)
			l.up.arrive(l, nil, buf[:n], l.target, true)
			continue
		}
		l.up.arrive(l, c, buf[:n], l.target, false)
	}
}

// clientFor returns the upstream socket for a client, opening it on first use.
func (l *Link) clientFor(from netip.AddrPort) (*client, error) {
	l.clientsMu.Lock()
	defer l.clientsMu.Unlock()
	if c, ok := l.clients[from]; ok {
		return c, nil
	}
	if l.closed() {
		return nil, ErrClosed
	}
	if len(l.clients) >= maxClients {
		return nil, fmt.Errorf("linkem: more than %d clients", maxClients)
	}
	network, local := "udp4", netip.AddrFrom4([4]byte{127, 0, 0, 1})
	if l.target.Addr().Is6() && !l.target.Addr().Is4In6() {
		network, local = "udp6", netip.IPv6Loopback()
	}
	conn, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		return nil, fmt.Errorf("linkem: upstream socket for %v: %w", from, err)
	}
	tune(conn)
	c := &client{addr: from, conn: conn}
	l.clients[from] = c
	l.log.Debug("new client", "client", from.String(), "upstream", conn.LocalAddr().String())
	l.wg.Add(1)
	go l.readUpstream(c)
	return c, nil
}

// readUpstream owns one client's upstream socket: replies from the target.
func (l *Link) readUpstream(c *client) {
	defer l.wg.Done()
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if l.closed() {
				return
			}
			l.log.Warn("upstream read failed", "client", c.addr.String(), "err", err)
			continue
		}
		if from.Addr().Unmap() != l.target.Addr().Unmap() || from.Port() != l.target.Port() {
			continue // only the target may answer through the link
		}
		l.down.arrive(l, nil, buf[:n], c.addr, false)
	}
}

// arrive applies cut, loss and delay to a datagram and queues a copy.
func (d *direction) arrive(l *Link, from *client, pkt []byte, dst netip.AddrPort, overflow bool) {
	defer func() {
		if l.decided != nil {
			l.decided(d == l.up)
		}
	}()
	l.cfgMu.Lock()
	cfg := l.cfg
	l.cfgMu.Unlock()
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case overflow:
		d.stats.Overflow++
		return
	case l.cut.Load():
		d.stats.Cut++
		return
	}
	due, ok := d.line.admit(cfg, now)
	if !ok {
		d.stats.Lost++
		return
	}
	if !d.q.push(item{due: due, pkt: append([]byte(nil), pkt...), dst: dst, from: from}) {
		d.stats.Overflow++
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// deliver owns one direction's delay line: it sends each datagram when due.
func (l *Link) deliver(d *direction, toTarget bool) {
	defer l.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		d.mu.Lock()
		it, ok := d.q.peek()
		var wait time.Duration
		if ok {
			wait = time.Until(it.due)
			if wait <= 0 {
				d.q.pop()
				if l.cut.Load() {
					d.stats.Cut++
					ok = false
				} else {
					d.stats.Packets++
					d.stats.Bytes += uint64(len(it.pkt))
				}
				d.mu.Unlock()
				if ok {
					l.send(it, toTarget)
				}
				continue
			}
			timer.Reset(wait)
		}
		d.mu.Unlock()
		var tc <-chan time.Time
		if ok {
			tc = timer.C
		}
		select {
		case <-l.done:
			return
		case <-d.wake:
		case <-tc:
		}
	}
}

func (l *Link) send(it item, toTarget bool) {
	var err error
	if toTarget {
		_, err = it.from.conn.WriteToUDPAddrPort(it.pkt, it.dst)
	} else {
		_, err = l.front.WriteToUDPAddrPort(it.pkt, it.dst)
	}
	if err != nil && !l.closed() {
		l.log.Debug("send failed", "dst", it.dst.String(), "err", err)
	}
}
