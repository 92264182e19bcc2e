package multipath

import (
	"encoding/binary"
	"net/netip"

	"golang.zx2c4.com/wireguard/tun"
)

// Received data is credited to a peer's source address only once WireGuard
// has authenticated it and found its counter fresh. The bind cannot tell
// either: it sees ciphertext, and a stranger who saw one of our session
// indices can send well-formed messages carrying it. wireguard-go can, and
// it passes every data packet that survives decryption, the replay check
// and the allowed-IPs check to the TUN device's Write, in the very buffer
// the bind received the message into (device/receive.go: the message is
// read into a *[MaxMessageSize]byte, decrypted in place, and written as
// buffer[:16+len(plaintext)], the 16-byte transport header still in front).
//
// So the bind marks each transport message it passes to WireGuard by
// writing, in its buffer just beyond the message, the message's header
// fields and its source address; and the TUN wrapper (WrapTUN) reads the
// mark of every packet WireGuard writes and credits that source. A message
// that fails authentication or is a replay never reaches Write, so it is
// never credited; a mark cannot outlive its message, because every message
// the bind passes to WireGuard gets a fresh mark (or is dropped, below) and
// only such messages reach Write. Keepalives (empty data) are authenticated
// too but wireguard-go consumes them without a Write: they are not credited.
//
// Where the mark goes. The mark sits at the first 64-byte boundary at or
// after the end of the message (markOffset), so it shares a page and
// usually a cache-line pair with the message the bind just received, and
// the TUN wrapper reads it next to the packet it writes. (At the end of
// the 65535-byte buffer, far from the message, it would cost a cold cache
// line and often a TLB miss on each side, a few per cent of the receiving
// relay's CPU in the offloads-on throughput profile.) The wrapper sees the
// decrypted packet, not the message, so it computes the same boundary from
// the packet's length: a transport message is 16 bytes of header, the
// plaintext and a 16-byte tag, and the plaintext is the IP packet followed
// by zero padding to the next multiple of 16 (capped at the sender's MTU,
// which only shortens it). That is what wireguard-go and the Linux kernel
// send (wireguard-go's calculatePaddingSize, the kernel's
// calculate_skb_padding), so the message ends in the same 16-byte unit as
// 32 + the packet's length rounded up to 16, and its 64-byte boundary is
// the one the wrapper computes. A sender that pads further can end its
// message past that boundary, and gets its mark on a later one; the
// wrapper then finds none and does not credit the packet (probes still
// prove the path). What the wrapper reads at the boundary is
// trusted only if it starts with the bind's secret (random per Bind, never
// sent: receive buffers are overwritten before any byte of them goes on the
// wire), names the message's receiver index and counter, and records a
// message size whose boundary this is and that holds the packet: bytes
// there that a stranger planted, or that a message wrote over an older
// mark, are not a mark.
//
// A transport message that leaves no room for a mark in its 65535-byte
// buffer (one over 65408 bytes) is dropped. No peer
// sends one: it would carry an inner packet of over 65000 bytes, and the
// relay's MTU is at most 9000.

// markSize is the size of a mark:
//
//	off len
//	  0   8 the bind's secret (Bind.secret); 0 once the mark is consumed
//	  8  12 bytes 4..15 of the message: receiver index and counter
//	 20  16 source address (IPv4 as IPv4-mapped IPv6)
//	 36   2 source port (little-endian)
//	 38   2 message size on the wire (little-endian)
//	 40   1 markV4 or markV6
//	 41   7 zero
//	 48  16 the message's authentication tag (its last 16 bytes), which
//	        identifies a copy of the same message sent over another path
//	        (redundant.go)
const markSize = 64

// markAlign is the boundary a mark starts on: a cache line.
const markAlign = 64

const (
	markV4 = 4
	markV6 = 6
)

// transportHeader is the size of a transport message's header, which
// wireguard-go leaves in front of the decrypted packet it writes.
const transportHeader = 16

// tagSize is the size of a transport message's Poly1305 tag, at its end.
const tagSize = 16

// markOffset is where the mark of a message of size bytes starts.
func markOffset(size int) int { return (size + markAlign - 1) &^ (markAlign - 1) }

// packetMarkOffset is where the mark of the message whose decrypted packet
// wireguard-go writes as buf (transport header in front, padding and tag
// cut off) starts: the message's own markOffset, as explained above.
func packetMarkOffset(buf []byte) int {
	padded := (len(buf) - transportHeader + 15) &^ 15
	return markOffset(transportHeader + padded + tagSize)
}

// mark writes the mark of the transport message buf[:size] from src just
// beyond it, signed with secret. It reports false when there is no room.
func mark(buf []byte, size int, src netip.AddrPort, secret uint64) bool {
	off := markOffset(size)
	if off+markSize > cap(buf) {
		return false
	}
	m := buf[off : off+markSize]
	binary.LittleEndian.PutUint64(m[0:], secret)
	copy(m[8:20], buf[4:transportHeader])
	a16 := src.Addr().As16()
	copy(m[20:36], a16[:])
	binary.LittleEndian.PutUint16(m[36:], src.Port())
	binary.LittleEndian.PutUint16(m[38:], uint16(size))
	m[40] = markV6
	if src.Addr().Is4() {
		m[40] = markV4
	}
	clear(m[41:48])
	copy(m[48:64], buf[size-tagSize:size])
	return true
}

// readMark returns the source and wire size recorded for the decrypted
// packet buf (as wireguard-go writes it: transport header in front), and
// consumes the mark. ok is false when buf carries no mark of its own
// message signed with secret. The message's tag stays readable with
// markTag.
func readMark(buf []byte, secret uint64) (src netip.AddrPort, size int, ok bool) {
	if len(buf) < transportHeader {
		return netip.AddrPort{}, 0, false
	}
	off := packetMarkOffset(buf)
	if off+markSize > cap(buf) {
		return netip.AddrPort{}, 0, false
	}
	m := buf[off : off+markSize : off+markSize]
	if binary.LittleEndian.Uint64(m[0:]) != secret || string(m[8:20]) != string(buf[4:transportHeader]) {
		return netip.AddrPort{}, 0, false
	}
	kind := m[40]
	size = int(binary.LittleEndian.Uint16(m[38:]))
	if kind != markV4 && kind != markV6 || markOffset(size) != off || size < len(buf)+tagSize {
		return netip.AddrPort{}, 0, false
	}
	binary.LittleEndian.PutUint64(m[0:], 0) // credited once
	addr := netip.AddrFrom16([16]byte(m[20:36]))
	if kind == markV4 {
		addr = addr.Unmap()
	}
	return netip.AddrPortFrom(addr, binary.LittleEndian.Uint16(m[36:])), size, true
}

// markTag is the tag recorded in buf's mark (valid after readMark).
func markTag(buf []byte) (tag [tagSize]byte) {
	off := packetMarkOffset(buf)
	copy(tag[:], buf[off+48:off+markSize])
	return tag
}

// WrapTUN returns dev with a Write that credits each packet to the source
// its message came from (RxStats) before passing the batch on to dev. Give
// the result, not dev, to device.NewDevice together with this bind.
func (b *Bind) WrapTUN(dev tun.Device) tun.Device { return &authTUN{Device: dev, b: b} }

// authTUN is the TUN device wrapper of WrapTUN.
type authTUN struct {
	tun.Device
	b *Bind
}

// Write credits the packets, then writes them to the wrapped device.
func (t *authTUN) Write(bufs [][]byte, offset int) (int, error) {
	if offset == transportHeader {
		t.b.credit(bufs)
	}
	return t.Device.Write(bufs, offset)
}

// credit counts each authenticated packet of a Write for the peer that
// owns its receiver index and the source its mark names. Consecutive
// packets of one peer and source are counted together.
func (b *Bind) credit(bufs [][]byte) {
	var index map[uint32]*peer
	if m := b.index.Load(); m != nil {
		index = *m
	}
	run := runCount{now: b.nanos()}
	for _, buf := range bufs {
		src, size, ok := readMark(buf, b.secret)
		if !ok {
			continue
		}
		idx := binary.LittleEndian.Uint32(buf[offReceiverIndex:])
		if p := index[idx]; p != nil {
			run.add(p, src, size)
			if ctr := binary.LittleEndian.Uint64(buf[offCounter:]); sampled(ctr) {
				p.dupRing().record(idx, ctr, markTag(buf), src)
			}
		}
	}
	run.flush()
}
