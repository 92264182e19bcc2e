package dnsserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Server serves a Handler over UDP and TCP on each of its addresses. Build
// it with Listen, run it with Run.
type Server struct {
	h       *Handler
	servers []*dns.Server
	addrs   []netip.AddrPort
}

// Listen opens UDP and TCP sockets on every address of listen, and
// nothing else: the responder answers only where it is told. The error
// names the address that failed (as dnsServer.listen[i]); nothing stays
// open then.
func Listen(listen []netip.AddrPort, h *Handler) (*Server, error) {
	s := &Server{h: h}
	for i, ap := range listen {
		pc, ln, err := listenPair(ap)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("dnsServer.listen[%d]: %w", i, err)
		}
		bound := pc.LocalAddr().(*net.UDPAddr).AddrPort()
		_ = pc.SetReadBuffer(udpReadBuffer)
		s.addrs = append(s.addrs, netip.AddrPortFrom(bound.Addr().Unmap(), bound.Port()))
		s.servers = append(s.servers,
			&dns.Server{PacketConn: pc, Handler: admitted{h},
				DecorateReader: func(r dns.Reader) dns.Reader { return limitReader{r, h} }},
			&dns.Server{Listener: ln, Handler: h, ReadTimeout: tcpIdle, WriteTimeout: tcpIdle, IdleTimeout: func() time.Duration { return tcpIdle }})
	}
	return s, nil
}

// listenPair opens UDP and TCP on ap. With port 0 (tests) TCP takes the
// port UDP got, and another port is tried when that one is taken for TCP.
func listenPair(ap netip.AddrPort) (*net.UDPConn, *net.TCPListener, error) {
	for try := 0; ; try++ {
		pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
		if err != nil {
			return nil, nil, err
		}
		ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(pc.LocalAddr().(*net.UDPAddr).AddrPort()))
		if err == nil {
			return pc, ln, nil
		}
		_ = pc.Close()
		if ap.Port() != 0 || try == 10 {
			return nil, nil, err
		}
	}
}

// udpReadBuffer is the UDP socket's receive buffer: room for a burst of
// queries while the read loop drops a flood, so that other sources'
// queries are not lost in the kernel first. 4 MiB, if the kernel allows.
const udpReadBuffer = 4 << 20

// limitReader is the UDP read loop's rate limit: a query over its
// source's budget is dropped as it is read, before the server spends a
// goroutine and a parse on it.
type limitReader struct {
	dns.Reader
	h *Handler
}

func (r limitReader) ReadUDP(conn *net.UDPConn, timeout time.Duration) ([]byte, *dns.SessionUDP, error) {
	for {
		m, s, err := r.Reader.ReadUDP(conn, timeout)
		if err != nil || s == nil || r.h.Admit(s.RemoteAddr()) {
			return m, s, err
		}
	}
}

// admitted serves UDP queries that limitReader has admitted already.
type admitted struct{ h *Handler }

func (a admitted) ServeDNS(w dns.ResponseWriter, r *dns.Msg) { a.h.respond(w, r) }

// tcpIdle closes a TCP connection that sends nothing for this long, so a
// client cannot hold connections open for free.
const tcpIdle = 5 * time.Second

// Addrs are the addresses listened on (the ports chosen for port 0).
func (s *Server) Addrs() []netip.AddrPort { return s.addrs }

// SetView publishes v to the handler.
func (s *Server) SetView(v *View) { s.h.SetView(v) }

// Run serves until ctx is done, then closes every socket and returns once
// every server has stopped.
func (s *Server) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errc := make(chan error, len(s.servers))
	for _, srv := range s.servers {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		done := make(chan struct{})
		wg.Go(func() {
			defer close(done)
			if err := srv.ActivateAndServe(); err != nil {
				errc <- err
			}
		})
		// Shutdown refuses a server that has not started yet: wait.
		select {
		case <-started:
		case <-done:
		}
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.close()
	wg.Wait()
	return err
}

// close shuts every server (or, one that is not serving, its sockets)
// down.
func (s *Server) close() {
	for _, srv := range s.servers {
		if err := srv.Shutdown(); err != nil {
			closeSockets(srv)
		}
	}
}

// closeSockets closes the sockets of a server that never started.
func closeSockets(srv *dns.Server) {
	var errs []error
	if srv.PacketConn != nil {
		errs = append(errs, srv.PacketConn.Close())
	}
	if srv.Listener != nil {
		errs = append(errs, srv.Listener.Close())
	}
	_ = errors.Join(errs...)
}

// Close releases a Server that was built but never Run.
func (s *Server) Close() { s.close() }
