package socks5

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// socksMaxUDPHeader is the longest SOCKS5 UDP request header: RSV(2) FRAG(1)
// ATYP(1) IPv6(16) PORT(2).
const socksMaxUDPHeader = 22

// socksParseUDP splits a SOCKS5 UDP request datagram into its destination
// and payload. Fragments (FRAG != 0) are refused, as RFC 1928 allows.
func socksParseUDP(b []byte) (netip.AddrPort, []byte, error) {
	if len(b) < 4 {
		return netip.AddrPort{}, nil, fmt.Errorf("%w: udp header of %d bytes", errSocksProtocol, len(b))
	}
	if b[2] != 0 {
		return netip.AddrPort{}, nil, fmt.Errorf("%w: udp fragment %d", errSocksProtocol, b[2])
	}
	r := bytes.NewReader(b[3:])
	dst, err := socksReadAddr(r)
	if err != nil {
		return netip.AddrPort{}, nil, err
	}
	return dst, b[len(b)-r.Len():], nil
}

// socksAssoc is one UDP ASSOCIATE: a host UDP socket the client sends
// wrapped datagrams to, and up to one mesh socket per address family. It
// lives as long as the client's control connection.
type socksAssoc struct {
	s        *Server
	host     *net.UDPConn
	clientIP netip.Addr
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	client netip.AddrPort    // fixed by the first datagram from clientIP
	mesh   [2]net.PacketConn // [0] IPv4, [1] IPv6
}

// errNoSource: the mesh has no own address of a datagram's destination's
// family.
var errNoSource = errors.New("socks5: no own mesh address of the destination's family")

// associate serves UDP ASSOCIATE until the control connection c ends.
func (s *Server) associate(ctx context.Context, c net.Conn) error {
	local := socksAddrPort(c.LocalAddr()).Addr()
	host, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, 0)))
	if err != nil {
		socksReply(c, socksRepFailure, netip.AddrPort{})
		return fmt.Errorf("socks5: udp associate: %w", err)
	}
	a := &socksAssoc{s: s, host: host, clientIP: socksAddrPort(c.RemoteAddr()).Addr().Unmap()}
	if err := socksReply(c, socksRepOK, host.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		a.close()
		return fmt.Errorf("socks5: udp associate reply: %w", err)
	}
	c.SetDeadline(time.Time{})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.fromClient()
	}()
	// The association ends when the control connection does (EOF, error,
	// or Serve closing it); closing the host socket then ends fromClient.
	stop := make(chan struct{})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case <-stop:
		case <-ctx.Done():
		}
		c.Close()
	}()
	_, err = io.Copy(io.Discard, c)
	close(stop)
	a.close()
	a.wg.Wait()
	return err
}

// close closes the association's sockets, which ends its goroutines.
func (a *socksAssoc) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	a.host.Close()
	for _, pc := range a.mesh {
		if pc != nil {
			pc.Close()
		}
	}
}

// fromClient unwraps the client's datagrams and sends them into the mesh.
func (a *socksAssoc) fromClient() {
	defer a.close()
	buf := make([]byte, 64<<10)
	for {
		m, from, err := a.host.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		if from.Addr() != a.clientIP {
			continue // RFC 1928: only the client that asked may use the relay
		}
		a.mu.Lock()
		if !a.client.IsValid() {
			a.client = from
		}
		same := a.client == from
		a.mu.Unlock()
		if !same {
			continue
		}
		dst, payload, err := socksParseUDP(buf[:m])
		if err != nil {
			a.s.log.Debug("socks5: bad udp datagram", "client", from, "err", err)
			continue
		}
		pc, err := a.meshFor(dst.Addr())
		if err != nil {
			a.s.log.Debug("socks5: udp", "dst", dst, "err", err)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		pc.WriteTo(payload, net.UDPAddrFromAddrPort(dst))
	}
}

// meshFor returns the mesh socket for dst's family, opening it on first use.
func (a *socksAssoc) meshFor(dst netip.Addr) (net.PacketConn, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, net.ErrClosed
	}
	i := 0
	if dst.Is6() {
		i = 1
	}
	if a.mesh[i] != nil {
		return a.mesh[i], nil
	}
	src, ok := a.s.mesh.SourceFor(dst)
	if !ok {
		return nil, errNoSource
	}
	pc, err := a.s.mesh.ListenUDP(netip.AddrPortFrom(src, 0))
	if err != nil {
		return nil, err
	}
	a.mesh[i] = pc
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.fromMesh(pc)
	}()
	return pc, nil
}

// fromMesh wraps datagrams arriving from the mesh and sends them to the
// client.
func (a *socksAssoc) fromMesh(pc net.PacketConn) {
	buf := make([]byte, 64<<10)
	for {
		m, from, err := pc.ReadFrom(buf[socksMaxUDPHeader:])
		if err != nil {
			return
		}
		var hdr [socksMaxUDPHeader]byte
		h := socksAppendAddr(append(hdr[:0], 0, 0, 0), socksAddrPort(from))
		start := socksMaxUDPHeader - len(h)
		copy(buf[start:], h)
		a.mu.Lock()
		client := a.client
		a.mu.Unlock()
		if client.IsValid() {
			a.host.WriteToUDPAddrPort(buf[start:socksMaxUDPHeader+m], client)
		}
	}
}
