package bind

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
// writing, in the last markSize bytes of its buffer (beyond the message: the
// buffer is 65535 bytes, a message at most MTU+32), the message's header
// fields and its source address; and the TUN wrapper (WrapTUN) reads the
// mark of every packet WireGuard writes and credits that source. A message
// that fails authentication or is a replay never reaches Write, so it is
// never credited; a mark cannot outlive its message, because every message
// the bind passes to WireGuard gets a fresh mark (or is dropped, below) and
// only such messages reach Write. Keepalives (empty data) are authenticated
// too but wireguard-go consumes them without a Write: they are not credited.
//
// A transport message longer than the buffer minus markSize (65479 bytes)
// leaves no room for a mark; the bind drops it. No peer sends one: it would
// carry an inner packet of over 65000 bytes, and the relay's MTU is at most
// 9000.

// markSize is the size of the mark at the end of a receive buffer:
//
//	off len
//	  0  12 bytes 4..15 of the message: receiver index and counter
//	 12  16 source address (IPv4 as IPv4-mapped IPv6)
//	 28   2 source port (little-endian)
//	 30   2 message size on the wire (little-endian)
//	 32   1 markV4 or markV6; 0 when no mark is pending
//	 33   7 zero
//	 40  16 the message's authentication tag (its last 16 bytes), which
//	        identifies a copy of the same message sent over another path
//	        (redundant.go)
const markSize = 56

const (
	markV4 = 4
	markV6 = 6
)

// transportHeader is the size of a transport message's header, which
// wireguard-go leaves in front of the decrypted packet it writes.
const transportHeader = 16

// mark writes the mark of the transport message buf[:size] from src at the
// end of buf's capacity. It reports false when there is no room.
func mark(buf []byte, size int, src netip.AddrPort) bool {
	full := buf[:cap(buf)]
	if size+markSize > len(full) {
		return false
	}
	m := full[len(full)-markSize:]
	copy(m[0:12], buf[4:transportHeader])
	a16 := src.Addr().As16()
	copy(m[12:28], a16[:])
	binary.LittleEndian.PutUint16(m[28:], src.Port())
	binary.LittleEndian.PutUint16(m[30:], uint16(size))
	m[32] = markV6
	if src.Addr().Is4() {
		m[32] = markV4
	}
	clear(m[33:40])
	copy(m[40:56], buf[size-tagSize:size])
	return true
}

// tagSize is the size of a transport message's Poly1305 tag, at its end.
const tagSize = 16

// readMark returns the source and wire size recorded for the decrypted
// packet buf (as wireguard-go writes it: transport header in front), and
// consumes the mark. ok is false when buf carries no mark of its own
// message. The message's tag stays readable with markTag.
func readMark(buf []byte) (src netip.AddrPort, size int, ok bool) {
	full := buf[:cap(buf)]
	if len(buf) < transportHeader || len(buf)+markSize > len(full) {
		return netip.AddrPort{}, 0, false
	}
	m := full[len(full)-markSize:]
	kind := m[32]
	if kind != markV4 && kind != markV6 || string(m[0:12]) != string(buf[4:transportHeader]) {
		return netip.AddrPort{}, 0, false
	}
	m[32] = 0 // credited once
	addr := netip.AddrFrom16([16]byte(m[12:28]))
	if kind == markV4 {
		addr = addr.Unmap()
	}
	return netip.AddrPortFrom(addr, binary.LittleEndian.Uint16(m[28:])), int(binary.LittleEndian.Uint16(m[30:])), true
}

// markTag is the tag recorded in buf's mark (valid after readMark).
func markTag(buf []byte) (tag [tagSize]byte) {
	full := buf[:cap(buf)]
	copy(tag[:], full[len(full)-markSize+40:])
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
		src, size, ok := readMark(buf)
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
