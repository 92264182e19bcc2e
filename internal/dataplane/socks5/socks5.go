package socks5

import (
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
// username/password (0x02, RFC 1929; see auth.go).
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

// errSocksProtocol: the client broke RFC 1928.
var errSocksProtocol = errors.New("socks5: protocol error")

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
func socksNegotiate(rw io.ReadWriter, creds *Credentials) error {
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

// socksReply writes a reply: VER REP RSV and the bound address.
func socksReply(w io.Writer, code byte, bound netip.AddrPort) error {
	_, err := w.Write(socksAppendAddr([]byte{socksVersion, code, 0}, bound))
	return err
}

// socksAddrPort returns the address and port of a TCP or UDP address.
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
