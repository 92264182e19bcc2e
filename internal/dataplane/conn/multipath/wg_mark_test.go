package multipath

import (
	"testing"
	"time"
)

// send passes pkt to a's TUN and waits for it out of b's.
func send(t *testing.T, a, b *node, pkt []byte) {
	t.Helper()
	timer := time.NewTimer(failAfter)
	defer timer.Stop()
	select {
	case a.tun.Outbound <- pkt:
	case <-timer.C:
		t.Fatalf("%s: TUN did not take the packet", a.name)
	}
	for {
		select {
		case got := <-b.tun.Inbound:
			if string(got) == string(pkt) {
				return
			}
		case <-timer.C:
			t.Fatalf("%d-byte packet %s -> %s: nothing arrived within %v", len(pkt), a.name, b.name, failAfter)
		}
	}
}

func TestDevicesCreditEveryPacketSize(t *testing.T) {
	// Real wireguard-go pads each packet's plaintext; the receiving bind
	// finds the mark of every packet anyway (authrx.go), whatever its size
	// modulo 16 or 64, and credits the message's size on the wire.
	a := newNode(t, "a", 8, "10.9.4.1", true)
	b := newNode(t, "b", 108, "10.9.4.2", true)
	a.addPeer(t, b, []Path{{"direct", b.addr()}})
	b.addPeer(t, a, []Path{{"direct", a.addr()}})
	ping(t, a, b)
	before := b.bind.RxStats("a")
	if len(before) != 1 {
		t.Fatalf("RxStats(a) after a ping: %+v", before)
	}
	var packets, bytes uint64
	for n := 20; n <= 20+130; n++ {
		send(t, a, b, ipv4Packet(a.ip, b.ip, n))
		packets++
		bytes += uint64(32 + (n+15)&^15) // header, padded plaintext, tag
	}
	for _, n := range []int{1000, 1391, 1400, 1419, 1420} {
		send(t, a, b, ipv4Packet(a.ip, b.ip, n))
		packets++
		bytes += uint64(32 + min((n+15)&^15, 1420)) // padding stops at the MTU
	}
	got := b.bind.RxStats("a")
	if len(got) != 1 || got[0].Addr != a.addr() {
		t.Fatalf("RxStats(a) = %+v, want one source %v", got, a.addr())
	}
	if d := got[0].Packets - before[0].Packets; d != packets {
		t.Fatalf("credited %d of %d packets", d, packets)
	}
	if d := got[0].Bytes - before[0].Bytes; d != bytes {
		t.Fatalf("credited %d bytes, want %d (the messages' sizes on the wire)", d, bytes)
	}
}
