package udpbind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketBuffer is the send and receive buffer asked for, as StdNetBind
// does: beyond net.core.[rw]mem_max only with CAP_NET_ADMIN.
const socketBuffer = 7 << 20

// socket is one open UDP socket of the bind.
type socket struct {
	conn *net.UDPConn
	rc   syscall.RawConn
	v6   bool
	// gso: the kernel takes UDP_SEGMENT; cleared for good at the first
	// send the device refuses (EIO: no checksum offload).
	gso atomic.Bool
}

// listen opens a UDP socket of network ("udp4" or "udp6") on port (0: any)
// with the options the bind relies on.
func listen(network string, port int) (*socket, int, error) {
	s := &socket{v6: network == "udp6"}
	var optErr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if err := c.Control(func(fd uintptr) { optErr = s.setOptions(int(fd)) }); err != nil {
			return err
		}
		return optErr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, ":"+strconv.Itoa(port))
	if err != nil {
		return nil, 0, err
	}
	s.conn = pc.(*net.UDPConn)
	if s.rc, err = s.conn.SyscallConn(); err != nil {
		_ = s.conn.Close()
		return nil, 0, fmt.Errorf("udpbind: %s socket: %w", network, err)
	}
	var txErr error
	_ = s.rc.Control(func(fd uintptr) {
		_, txErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	})
	s.gso.Store(txErr == nil)
	return s, s.conn.LocalAddr().(*net.UDPAddr).Port, nil
}

// setOptions runs before bind(2): buffers (best effort), the packet info
// that sticky sources need, IPv6 only on the IPv6 socket, and GRO (best
// effort: without it every datagram arrives alone).
func (s *socket) setOptions(fd int) error {
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, socketBuffer)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, socketBuffer)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, socketBuffer)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, socketBuffer)
	if s.v6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1); err != nil {
			return fmt.Errorf("IPV6_RECVPKTINFO: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return fmt.Errorf("IPV6_V6ONLY: %w", err)
		}
	} else if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1); err != nil {
		return fmt.Errorf("IP_PKTINFO: %w", err)
	}
	// Whether or not the kernel can report it back (getsockopt UDP_GRO
	// needs 5.12), every coalesced message carries its segment size, which
	// the receive side reads (parseControl): no flag to keep.
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_GRO, 1)
	return nil
}

// mmsg makes one recvmmsg or sendmmsg call (trap) over hdrs, retrying on
// EINTR and waiting in the netpoller while the socket is not ready. err
// is the poller's (net.ErrClosed once the socket is closed), errno the
// call's.
func (s *socket) mmsg(trap uintptr, hdrs []unix.Mmsghdr) (n int, errno unix.Errno, err error) {
	call := func(fd uintptr) bool {
		for {
			r, _, e := unix.Syscall6(trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(hdrs))), uintptr(len(hdrs)), 0, 0, 0)
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	}
	if trap == unix.SYS_SENDMMSG {
		err = s.rc.Write(call)
	} else {
		err = s.rc.Read(call)
	}
	return n, errno, err
}

// setMark sets SO_MARK on the socket.
func (s *socket) setMark(mark uint32) error {
	var err error
	if cerr := s.rc.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_MARK, int(mark))
	}); cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("udpbind: SO_MARK %#x: %w", mark, err)
	}
	return nil
}

// openPair opens the IPv4 and IPv6 sockets on one port. Either family may
// be missing from the system (EAFNOSUPPORT), not both. With port 0 it
// retries when the IPv4 socket's port is taken for IPv6.
func openPair(port uint16) (v4, v6 *socket, actual uint16, err error) {
	for tries := 0; ; tries++ {
		p := int(port)
		v4, p, err = listen("udp4", p)
		if err != nil {
			if !errors.Is(err, syscall.EAFNOSUPPORT) {
				return nil, nil, 0, err
			}
			p = int(port) // no IPv4: IPv6 alone on the port asked for
		}
		v6, p, err = listen("udp6", p)
		if port == 0 && errors.Is(err, syscall.EADDRINUSE) && tries < 100 {
			v4.close()
			continue
		}
		if err != nil && !errors.Is(err, syscall.EAFNOSUPPORT) {
			v4.close()
			return nil, nil, 0, err
		}
		if v4 == nil && v6 == nil {
			return nil, nil, 0, syscall.EAFNOSUPPORT
		}
		return v4, v6, uint16(p), nil
	}
}

// close closes the socket; a nil socket is fine.
func (s *socket) close() error {
	if s == nil {
		return nil
	}
	return s.conn.Close()
}
