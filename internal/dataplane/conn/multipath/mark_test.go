package multipath

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
)

// The mark of a received message is written next to the message and read
// back next to the packet WireGuard writes (authrx.go).

// receiveInto runs one message from src through the bind's receive side in
// a buffer of wireguard-go's size, filled with fill beyond the message.
func receiveInto(t *testing.T, b *Bind, msg []byte, src netip.AddrPort, fill byte) []byte {
	t.Helper()
	buf := make([]byte, device.MaxMessageSize)
	for i := range buf {
		buf[i] = fill
	}
	copy(buf, msg)
	sizes := []int{len(msg)}
	b.inspect([][]byte{buf}, sizes, endpoints(src), &Outbox{})
	if sizes[0] != len(msg) {
		t.Fatalf("message of %d bytes dropped by the receive side", len(msg))
	}
	return buf
}

func endpoints(src netip.AddrPort) []conn.Endpoint {
	return []conn.Endpoint{&conn.StdNetEndpoint{AddrPort: src}}
}

func TestMarkStaysNextToMessage(t *testing.T) {
	b := New(nopBind{})
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	for _, size := range []int{32, 48, 50, 96, 1452, 9032} {
		buf := receiveInto(t, b, transport(0xB1, 1, size, 7), pathA.Addr, 0xEE)
		// Nothing beyond the cache line after the message's end is written:
		// the receive buffer is 64 KiB, the message a few hundred bytes.
		for i := (size+63)&^63 + 64; i < len(buf); i++ {
			if buf[i] != 0xEE {
				t.Fatalf("message of %d bytes: the bind wrote byte %d of its buffer", size, i)
			}
		}
	}
}

func TestMarkCreditsPaddedPackets(t *testing.T) {
	// wireguard-go pads the plaintext to a multiple of 16 (at most up to the
	// MTU) and writes only the IP packet: the credit is still found, with the
	// message's size on the wire.
	for _, c := range []struct{ size, packet int }{
		{size: 32 + 96, packet: 84},     // an 84-byte ping padded to 96
		{size: 32 + 96, packet: 96},     // no padding
		{size: 32 + 96, packet: 81},     // 15 bytes of padding
		{size: 32 + 1420, packet: 1420}, // a full MTU packet
		{size: 32 + 1418, packet: 1418}, // padding capped at an MTU of 1418
		{size: 32 + 1418, packet: 1410}, // the same, 8 bytes of padding
	} {
		b := New(nopBind{})
		now := time.Unix(50, 0)
		b.SetClock(func() time.Time { return now })
		b.SetPeer("b", []Path{pathA})
		b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
		buf := receiveInto(t, b, transport(0xB1, 3, c.size, 7), pathA.Addr, 0)
		_, _ = b.WrapTUN(nopTUN{}).Write([][]byte{buf[:transportHeader+c.packet]}, transportHeader)
		if got, want := b.RxStats("b"), []Source{{pathA.Addr, 1, uint64(c.size)}}; len(got) != 1 || got[0] != want[0] {
			t.Fatalf("message of %d bytes, packet of %d: RxStats %+v, want %+v", c.size, c.packet, got, want)
		}
		// Credited once: writing the same buffer again credits nothing.
		_, _ = b.WrapTUN(nopTUN{}).Write([][]byte{buf[:transportHeader+c.packet]}, transportHeader)
		if got := rxFrom(b.RxStats("b"), pathA.Addr); got != 1 {
			t.Fatalf("message of %d bytes credited %d times", c.size, got)
		}
	}
}

func TestMarkOfAnotherBindIsNotCredited(t *testing.T) {
	// A mark is trusted only if this bind wrote it: bytes beyond a packet
	// that look like a mark (here written by another bind, with the same
	// session index, counter and layout) credit nothing.
	other := New(nopBind{})
	other.SetPeer("b", []Path{pathA})
	other.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, other, "b"))
	b := New(nopBind{})
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	stranger := netip.MustParseAddrPort("203.0.113.9:9")

	buf := receiveInto(t, other, transport(0xB1, 5, 128, 7), stranger, 0)
	_, _ = b.WrapTUN(nopTUN{}).Write([][]byte{buf[:128-tagSize]}, transportHeader)
	if got := b.RxStats("b"); len(got) != 0 {
		t.Fatalf("credited from a mark this bind did not write: %+v", got)
	}
	// The same message marked by b itself is credited.
	buf = receiveInto(t, b, transport(0xB1, 5, 128, 7), stranger, 0)
	_, _ = b.WrapTUN(nopTUN{}).Write([][]byte{buf[:128-tagSize]}, transportHeader)
	if got := rxFrom(b.RxStats("b"), stranger); got != 1 {
		t.Fatalf("own mark credited %d times, want 1", got)
	}
}

func TestMarkOfAnotherMessageIsNotCredited(t *testing.T) {
	// A shorter message with the same header (a forgery, which WireGuard
	// dropped) left its mark in the buffer. The packet WireGuard writes from
	// the buffer later is longer and carries no mark of its own: the old
	// mark, which the longer message covers, is not taken for its mark.
	b := New(nopBind{})
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	stranger := netip.MustParseAddrPort("203.0.113.9:9")
	buf := receiveInto(t, b, transport(0xB1, 9, 64, 7), stranger, 0)
	// A genuine message of 160 bytes with the same header lands in the same
	// buffer without passing the bind (as if marked by nobody), and
	// WireGuard writes its 100-byte packet.
	genuine := transport(0xB1, 9, 160, 8)
	copy(buf, genuine)
	binary.LittleEndian.PutUint16(buf[transportHeader+2:], 100) // an IPv4 total length, for show
	_, _ = b.WrapTUN(nopTUN{}).Write([][]byte{buf[:transportHeader+100]}, transportHeader)
	if got := b.RxStats("b"); len(got) != 0 {
		t.Fatalf("credited from another message's mark: %+v", got)
	}
}

func TestMessageWithoutRoomForItsMarkIsDropped(t *testing.T) {
	b := New(nopBind{})
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	for _, c := range []struct {
		size int
		kept bool
	}{{65408, true}, {65409, false}, {65535, false}} {
		buf := make([]byte, device.MaxMessageSize)
		copy(buf, transport(0xB1, 2, c.size, 7))
		sizes := []int{c.size}
		b.inspect([][]byte{buf}, sizes, endpoints(pathA.Addr), &Outbox{})
		if kept := sizes[0] == c.size; kept != c.kept {
			t.Fatalf("message of %d bytes: kept %v, want %v", c.size, kept, c.kept)
		}
	}
}
