package netstack

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"
)

// SOCKS5 (RFC 1928) constants. Authentication is none (method 0x00) or
// username/password (0x02, RFC 1929; see socks5_auth.go).
const (
	socksVersion       = 5
	socksMethodNone    = 0x00
	socksMethodNoneOK  = 0xff
	socksCmdConnect    = 1
	socksCmdBind       = 2
	socksCmdUDP        = 3
	socksAtypV4        = 1
	socksAtypDomain    = 3
	socksAtypV6        = 4
	socksRepOK         = 0
	socksRepFailure    = 1
	socksRepNetUnreach = 3
	socksRepHostUnrch  = 4
	socksRepRefused    = 5
	socksRepCmdUnsupp  = 7
	socksRepAtypUnsupp = 8

	// socksHandshakeTimeout bounds how long a client may take to send its
	// greeting and request, so that idle connections cannot pile up.
	socksHandshakeTimeout = 10 * time.Second
)

var errSocksProtocol = errors.New("socks5: protocol error")

func (n *Netstack) serveSOCKSConn(ctx context.Context, c net.Conn) error {
	c.SetDeadline(time.Now().Add(socksHandshakeTimeout))
	if err := socksNegotiate(c, n.socks.Credentials); err != nil {
		if errors.Is(err, errSocksAuth) {
			n.stats.socksRefusedAuth.Add(1)
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
		return n.socksConnect(ctx, c, dst)
	case socksCmdUDP:
		if n.stats.socksAssocs.Add(1) > int64(n.socks.MaxUDPAssociations) {
			n.stats.socksAssocs.Add(-1)
			n.stats.socksRefusedUDPLimit.Add(1)
			socksReply(c, socksRepFailure, netip.AddrPort{})
			return fmt.Errorf("socks5: udp associate: %d associations open, the most allowed", n.socks.MaxUDPAssociations)
		}
		defer n.stats.socksAssocs.Add(-1)
		return n.socksAssociate(ctx, c)
	default:
		socksReply(c, socksRepCmdUnsupp, netip.AddrPort{})
		return fmt.Errorf("socks5: command %d not supported", cmd)
	}
}

// socksReplyError carries the reply code a request failure maps to.
type socksReplyError struct {
	code byte
	msg  string
}

func (e socksReplyError) Error() string { return "socks5: " + e.msg }

// socksNegotiate reads the client's greeting and selects a method: with
// creds, username/password (then authenticates); without, none. A client
// that offers no acceptable method is answered 0xFF; without creds that is
// a protocol error, with creds an authentication failure (errSocksAuth).
func socksNegotiate(rw io.ReadWriter, creds *SOCKS5Credentials) error {
	var hdr [2]byte
	if _, err := io.ReadFull(rw, hdr[:]); err != nil {
		return fmt.Errorf("socks5: greeting: %w", err)
	}
	if hdr[0] != socksVersion {
		return fmt.Errorf("%w: version %d", errSocksProtocol, hdr[0])
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(rw, methods); err != nil {
		return fmt.Errorf("socks5: greeting methods: %w", err)
	}
	want, missing := byte(socksMethodNone), errSocksProtocol
	if creds != nil {
		want, missing = socksMethodUserPass, errSocksAuth
	}
	for _, m := range methods {
		if m != want {
			continue
		}
		if _, err := rw.Write([]byte{socksVersion, want}); err != nil {
			return err
		}
		if creds != nil {
			return socksAuthenticate(rw, creds)
		}
		return nil
	}
	rw.Write([]byte{socksVersion, socksMethodNoneOK})
	return fmt.Errorf("%w: client offers no acceptable method (want %#02x)", missing, want)
}

// socksReadRequest reads VER CMD RSV ATYP DST.ADDR DST.PORT.
func socksReadRequest(r io.Reader) (cmd byte, dst netip.AddrPort, err error) {
	var hdr [3]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, dst, fmt.Errorf("socks5: request: %w", err)
	}
	if hdr[0] != socksVersion {
		return 0, dst, fmt.Errorf("%w: request version %d", errSocksProtocol, hdr[0])
	}
	dst, err = socksReadAddr(r)
	return hdr[1], dst, err
}

// socksReadAddr reads ATYP ADDR PORT.
func socksReadAddr(r io.Reader) (netip.AddrPort, error) {
	var atyp [1]byte
	if _, err := io.ReadFull(r, atyp[:]); err != nil {
		return netip.AddrPort{}, fmt.Errorf("socks5: address type: %w", err)
	}
	var addr netip.Addr
	switch atyp[0] {
	case socksAtypV4:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return netip.AddrPort{}, fmt.Errorf("socks5: address: %w", err)
		}
		addr = netip.AddrFrom4(b)
	case socksAtypV6:
		var b [16]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return netip.AddrPort{}, fmt.Errorf("socks5: address: %w", err)
		}
		addr = netip.AddrFrom16(b).Unmap()
	case socksAtypDomain:
		var l [1]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return netip.AddrPort{}, fmt.Errorf("socks5: domain length: %w", err)
		}
		name := make([]byte, l[0])
		if _, err := io.ReadFull(r, name); err != nil {
			return netip.AddrPort{}, fmt.Errorf("socks5: domain: %w", err)
		}
		a, err := netip.ParseAddr(strings.Trim(string(name), "[]"))
		if err != nil {
			return netip.AddrPort{}, socksReplyError{socksRepAtypUnsupp, fmt.Sprintf("domain %q: no resolver in the mesh", name)}
		}
		addr = a.Unmap()
	default:
		return netip.AddrPort{}, socksReplyError{socksRepAtypUnsupp, fmt.Sprintf("address type %d", atyp[0])}
	}
	var port [2]byte
	if _, err := io.ReadFull(r, port[:]); err != nil {
		return netip.AddrPort{}, fmt.Errorf("socks5: port: %w", err)
	}
	return netip.AddrPortFrom(addr, binary.BigEndian.Uint16(port[:])), nil
}

// socksAppendAddr appends ATYP ADDR PORT; an invalid address is sent as
// 0.0.0.0.
func socksAppendAddr(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().Unmap()
	switch {
	case ip.Is6():
		v := ip.As16()
		b = append(append(b, socksAtypV6), v[:]...)
	case ip.Is4():
		v := ip.As4()
		b = append(append(b, socksAtypV4), v[:]...)
	default:
		b = append(b, socksAtypV4, 0, 0, 0, 0)
	}
	return binary.BigEndian.AppendUint16(b, a.Port())
}

func socksReply(w io.Writer, code byte, bound netip.AddrPort) error {
	_, err := w.Write(socksAppendAddr([]byte{socksVersion, code, 0}, bound))
	return err
}

// socksDialReply maps a dial error onto the closest reply code.
func socksDialReply(err error) byte {
	s := err.Error()
	switch {
	case errors.Is(err, ErrNoSourceAddress):
		return socksRepNetUnreach
	case strings.Contains(s, "refused"):
		return socksRepRefused
	case errors.Is(err, context.DeadlineExceeded), strings.Contains(s, "unreachable"), strings.Contains(s, "timed out"):
		return socksRepHostUnrch
	default:
		return socksRepFailure
	}
}

func socksAddrPort(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort()
	case *net.UDPAddr:
		return a.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

func (n *Netstack) socksConnect(ctx context.Context, c net.Conn, dst netip.AddrPort) error {
	dctx, cancel := context.WithTimeout(ctx, nsDialTimeout)
	mesh, err := n.DialContext(dctx, "tcp", dst.String())
	cancel()
	if err != nil {
		socksReply(c, socksDialReply(err), netip.AddrPort{})
		return fmt.Errorf("socks5: connect %s: %w", dst, err)
	}
	if err := socksReply(c, socksRepOK, socksAddrPort(mesh.LocalAddr())); err != nil {
		mesh.Close()
		return fmt.Errorf("socks5: connect reply: %w", err)
	}
	c.SetDeadline(time.Time{})
	n.splice(c, mesh)
	return nil
}
