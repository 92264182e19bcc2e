package socks5

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Mesh is the network the proxy connects its clients into: the relay's
// netstack (*netstack.Netstack implements it). Once the mesh is closed,
// DialContext and ListenUDP fail with an error wrapping net.ErrClosed, and
// the connections they returned fail too.
type Mesh interface {
	// DialContext connects from the mesh's own address of the
	// destination's family to address, a literal "ip:port".
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
	// ListenUDP binds a datagram socket on addr, one of the mesh's own
	// addresses; port 0 picks one.
	ListenUDP(addr netip.AddrPort) (net.PacketConn, error)
	// SourceFor returns the mesh's own address of dst's family, the source
	// DialContext uses; false when it has none.
	SourceFor(dst netip.Addr) (netip.Addr, bool)
}

// Options configures a Server.
type Options struct {
	// Credentials, when not nil, require every client to authenticate
	// with one of these username/password pairs (RFC 1929); nil means no
	// authentication.
	Credentials *Credentials
	// MaxConns caps the concurrent client connections; 0 means 256. A
	// connection over the cap is answered "no acceptable methods" and
	// closed at once.
	MaxConns int
	// MaxUDPAssociations caps the concurrent UDP ASSOCIATE requests, each
	// also a connection; 0 means 64. One over the cap gets "general
	// failure".
	MaxUDPAssociations int
	// Logger receives the proxy's logs; nil discards them.
	Logger *slog.Logger
}

const (
	defaultMaxConns  = 256
	defaultMaxAssocs = 64

	// dialTimeout bounds a CONNECT's dial into the mesh.
	dialTimeout = 10 * time.Second

	// Pauses after a failed Accept, as net/http.Server takes them: 5 ms,
	// doubling up to 1 s, back to the start after a success. Accept fails
	// mostly for want of file descriptors (EMFILE, ENFILE), which other
	// connections closing will free; retrying at once would spin.
	socksAcceptMinDelay = 5 * time.Millisecond
	socksAcceptMaxDelay = time.Second
	// socksRefuseTimeout bounds the write of the refusal to a connection
	// over the cap, which the accept loop does itself.
	socksRefuseTimeout = time.Second
)

// Server is a SOCKS5 (RFC 1928) proxy into a Mesh: CONNECT and UDP
// ASSOCIATE, both into the mesh. Domain names are accepted only when they
// are IP literals; there is no resolver. One Server may serve several
// listeners; the caps and counters are shared.
type Server struct {
	mesh  Mesh
	opts  Options
	log   *slog.Logger
	stats counters
}

// Stats counts what a Server served and refused since it was created.
// Counters only grow; Conns and Associations are gauges.
type Stats struct {
	Conns           int64  // client connections open now
	Associations    int64  // of those, UDP associations
	RefusedLimit    uint64 // connections closed at once: MaxConns were open
	RefusedUDPLimit uint64 // UDP ASSOCIATE refused: MaxUDPAssociations were open
	RefusedAuth     uint64 // clients that did not authenticate (credentials configured)
	AcceptErrors    uint64 // failed Accept calls, each retried after a pause
}

type counters struct {
	conns, assocs                 atomic.Int64
	refusedLimit, refusedUDPLimit atomic.Uint64
	refusedAuth, acceptErrors     atomic.Uint64
}

// New returns a proxy into mesh, configured by opts.
func New(mesh Mesh, opts Options) *Server {
	if opts.MaxConns <= 0 {
		opts.MaxConns = defaultMaxConns
	}
	if opts.MaxUDPAssociations <= 0 {
		opts.MaxUDPAssociations = defaultMaxAssocs
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{mesh: mesh, opts: opts, log: log.With("component", "socks5")}
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Conns:           c.conns.Load(),
		Associations:    c.assocs.Load(),
		RefusedLimit:    c.refusedLimit.Load(),
		RefusedUDPLimit: c.refusedUDPLimit.Load(),
		RefusedAuth:     c.refusedAuth.Load(),
		AcceptErrors:    c.acceptErrors.Load(),
	}
}

// Serve serves SOCKS5 on ln until ctx is done.
//
// A failed Accept (EMFILE, ENFILE, ECONNABORTED, a timeout, or any other
// error but a closed listener) is logged, counted and retried after a
// pause of 5 ms doubling up to 1 s. Serve returns nil when ctx is done,
// after closing ln and every connection it opened; it returns an error
// wrapping net.ErrClosed when someone else closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.serve(ctx, ln, socksWait)
}

// socksWait sleeps for d, or until ctx is done; it reports whether the
// whole pause elapsed.
func socksWait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// socksNextDelay returns the pause after an Accept failure that followed a
// pause of prev (0 after a success).
func socksNextDelay(prev time.Duration) time.Duration {
	if prev == 0 {
		return socksAcceptMinDelay
	}
	return min(2*prev, socksAcceptMaxDelay)
}

// connSet is the client connections one Serve call holds open.
type connSet struct {
	mu   sync.Mutex
	open map[net.Conn]struct{} // nil once closeAll ran
}

// add records c; it fails once closeAll ran.
func (cs *connSet) add(c net.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.open == nil {
		return false
	}
	cs.open[c] = struct{}{}
	return true
}

func (cs *connSet) remove(c net.Conn) {
	cs.mu.Lock()
	delete(cs.open, c)
	cs.mu.Unlock()
}

// closeAll closes every connection and refuses new ones.
func (cs *connSet) closeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for c := range cs.open {
		c.Close()
	}
	cs.open = nil
}

// serve is Serve with the pause after an Accept failure taken by wait,
// which tests replace.
func (s *Server) serve(ctx context.Context, ln net.Listener, wait func(context.Context, time.Duration) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conns := &connSet{open: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	wg.Go(func() { // closes everything on ctx done; exits when serve returns
		<-ctx.Done()
		ln.Close()
		conns.closeAll()
	})
	err := s.acceptLoop(ctx, ln, conns, &wg, wait)
	stopped := ctx.Err() != nil
	cancel()
	wg.Wait()
	if stopped {
		return nil
	}
	return fmt.Errorf("socks5: accept: %w", err)
}

// acceptLoop accepts connections and serves each on a goroutine of wg
// until ln fails for good or ctx is done; it returns Accept's last error.
func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, conns *connSet, wg *sync.WaitGroup, wait func(context.Context, time.Duration) bool) error {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return err
			}
			s.stats.acceptErrors.Add(1)
			delay = socksNextDelay(delay)
			s.log.Warn("socks5: accept failed, retrying", "err", err, "after", delay)
			if !wait(ctx, delay) {
				return err
			}
			continue
		}
		delay = 0
		if !s.admit(c) {
			continue
		}
		if !conns.add(c) {
			s.stats.conns.Add(-1)
			c.Close()
			return nil
		}
		wg.Go(func() { s.handle(ctx, c, conns) })
	}
}

// admit takes a place under MaxConns for c. Over the cap it refuses c
// (socksRefuseBusy), counts it and returns false.
func (s *Server) admit(c net.Conn) bool {
	if s.stats.conns.Add(1) <= int64(s.opts.MaxConns) {
		return true
	}
	s.stats.conns.Add(-1)
	s.stats.refusedLimit.Add(1)
	s.log.Debug("socks5: connection refused, too many open", "client", c.RemoteAddr(), "max", s.opts.MaxConns)
	socksRefuseBusy(c)
	return false
}

// handle serves the admitted connection c, then frees its place.
func (s *Server) handle(ctx context.Context, c net.Conn, conns *connSet) {
	defer func() {
		// Free the place before closing, so that a client that sees the
		// close may connect again at once.
		conns.remove(c)
		s.stats.conns.Add(-1)
		c.Close()
	}()
	if err := s.serveConn(ctx, c); err != nil {
		s.log.Debug("socks5: connection ended", "client", c.RemoteAddr(), "err", err)
	}
}

// socksRefuseBusy answers a connection over the cap as a server that accepts
// none of the client's methods would (VER 0xFF), then closes it.
func socksRefuseBusy(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(socksRefuseTimeout))
	c.Write([]byte{socksVersion, socksMethodNoneOK})
	c.Close()
}
