package socks5

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// serveConn runs one client connection: negotiation, then the request.
func (s *Server) serveConn(ctx context.Context, c net.Conn) error {
	c.SetDeadline(time.Now().Add(socksHandshakeTimeout))
	if err := socksNegotiate(c, s.opts.Credentials); err != nil {
		if errors.Is(err, errSocksAuth) {
			s.stats.refusedAuth.Add(1)
		}
		return err
	}
	cmd, dst, err := socksReadRequest(c)
	if err != nil {
		var rep socksReplyError
		if errors.As(err, &rep) {
			socksReply(c, rep.code, netip.AddrPort{})
		}
		return err
	}
	switch cmd {
	case socksCmdConnect:
		return s.connect(ctx, c, dst)
	case socksCmdUDP:
		if s.stats.assocs.Add(1) > int64(s.opts.MaxUDPAssociations) {
			s.stats.assocs.Add(-1)
			s.stats.refusedUDPLimit.Add(1)
			socksReply(c, socksRepFailure, netip.AddrPort{})
			return fmt.Errorf("socks5: udp associate: %d associations open, the most allowed", s.opts.MaxUDPAssociations)
		}
		defer s.stats.assocs.Add(-1)
		return s.associate(ctx, c)
	default:
		socksReply(c, socksRepCmdUnsupp, netip.AddrPort{})
		return fmt.Errorf("socks5: command %d not supported", cmd)
	}
}

// connect serves CONNECT: it dials dst into the mesh, replies, and splices
// the client to the mesh connection.
func (s *Server) connect(ctx context.Context, c net.Conn, dst netip.AddrPort) error {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	mesh, err := s.mesh.DialContext(dctx, "tcp", dst.String())
	cancel()
	if err != nil {
		// A closed mesh refuses every dial before it looks for a source
		// address; otherwise a dial with no source could not even start.
		_, hasSource := s.mesh.SourceFor(dst.Addr())
		socksReply(c, socksDialReply(err, !hasSource && !errors.Is(err, net.ErrClosed)), netip.AddrPort{})
		return fmt.Errorf("socks5: connect %s: %w", dst, err)
	}
	if err := socksReply(c, socksRepOK, socksAddrPort(mesh.LocalAddr())); err != nil {
		mesh.Close()
		return fmt.Errorf("socks5: connect reply: %w", err)
	}
	c.SetDeadline(time.Time{})
	splice(c, mesh)
	return nil
}

// socksDialReply maps a dial error onto the closest reply code. noSource
// says the mesh has no own address of the destination's family.
func socksDialReply(err error, noSource bool) byte {
	s := err.Error()
	switch {
	case noSource:
		return socksRepNetUnreach
	case strings.Contains(s, "refused"):
		return socksRepRefused
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(s, "unreachable"), strings.Contains(s, "timed out"):
		return socksRepHostUnrch
	default:
		return socksRepFailure
	}
}

type halfCloser interface{ CloseWrite() error }

// splice copies both ways between a and b until both directions are done,
// passing each EOF on as a half-close. An error in either direction closes
// both connections; so does Serve's stop, by closing the client's.
func splice(a, b net.Conn) {
	var once sync.Once
	abort := func() {
		once.Do(func() {
			a.Close()
			b.Close()
		})
	}
	defer abort()
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyHalf(b, a, abort)
	}()
	copyHalf(a, b, abort)
	<-done
}

// copyHalf copies src to dst; on EOF it half-closes dst, on error it aborts.
func copyHalf(dst, src net.Conn, abort func()) {
	_, err := io.Copy(dst, src)
	if err != nil {
		abort()
		return
	}
	if hc, ok := dst.(halfCloser); ok {
		if hc.CloseWrite() == nil {
			return
		}
	}
	abort()
}
