package bridge

import (
	"fmt"
	"net"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// port is an AF_PACKET socket bound to one interface, receiving every frame
// that arrives on it (promiscuous, not the ones we send) and sending frames
// out of it.
type port struct {
	name string
	fd   int
	mtu  int
}

// pollTimeout bounds how long a read blocks, so a reader notices that its
// context ended.
const pollTimeout = 200 * time.Millisecond

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func openPort(name string) (*port, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", name, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return nil, fmt.Errorf("AF_PACKET socket: %w", err)
	}
	p := &port{name: name, fd: fd, mtu: ifi.MTU}
	fail := func(what string, err error) (*port, error) {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s on %s: %w", what, name, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return fail("bind", err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return fail("promiscuous mode", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return fail("PACKET_IGNORE_OUTGOING (needs Linux 4.20)", err)
	}
	tv := unix.NsecToTimeval(pollTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("SO_RCVTIMEO", err)
	}
	// Bigger socket buffers absorb scheduling hiccups of a shared machine.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20)
	return p, nil
}

// read receives one frame into buf. It returns the frame's full length,
// which exceeds len(buf) when the frame was truncated, and EAGAIN after
// pollTimeout without a frame.
func (p *port) read(buf []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(buf) > 0 {
		ptr = unsafe.Pointer(&buf[0])
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(p.fd), uintptr(ptr), uintptr(len(buf)),
		unix.MSG_TRUNC, 0, 0)
	runtime.KeepAlive(buf)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// write sends one frame out of the port.
func (p *port) write(frame []byte) error {
	_, err := unix.Write(p.fd, frame)
	return err
}

func (p *port) close() error { return unix.Close(p.fd) }

// Legacy ethtool commands, each taking a struct ethtool_value.
const (
	ethtoolSRXCSUM = 0x15
	ethtoolSTXCSUM = 0x17
	ethtoolSSG     = 0x19
	ethtoolSTSO    = 0x1f
	ethtoolSGSO    = 0x24
	ethtoolSGRO    = 0x2c
)

type ethtoolValue struct{ cmd, data uint32 }

// ifreqData is struct ifreq with its union holding a pointer.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// DisableOffloads turns off checksum offload, scatter-gather, TSO, GSO and
// GRO on the interface named name in the caller's namespace, like
// `ethtool -K name rx off tx off sg off tso off gso off gro off`. Features
// the driver cannot change are left as they are.
func DisableOffloads(name string) error {
	if len(name) >= unix.IFNAMSIZ {
		return fmt.Errorf("interface name %q too long", name)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("ethtool socket: %w", err)
	}
	defer unix.Close(fd)
	// Order matters: dependent features first (TSO needs SG and TX csum).
	for _, cmd := range []uint32{ethtoolSTSO, ethtoolSGSO, ethtoolSGRO, ethtoolSSG, ethtoolSTXCSUM, ethtoolSRXCSUM} {
		v := ethtoolValue{cmd: cmd}
		var ifr ifreqData
		copy(ifr.name[:], name)
		ifr.data = unsafe.Pointer(&v)
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
		runtime.KeepAlive(&v)
		switch errno {
		case 0, unix.EOPNOTSUPP:
		case unix.ENODEV:
			return fmt.Errorf("offloads of %s: %w", name, errno)
		default:
			return fmt.Errorf("offloads of %s (ethtool cmd %#x): %w", name, cmd, errno)
		}
	}
	return nil
}
