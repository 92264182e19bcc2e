package multipath

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// udpPacket is a minimal IPv4 packet from src to dst carrying seq: enough
// for wireguard-go, which checks the version, length and source address.
func udpPacket(src, dst netip.Addr, seq uint32) []byte {
	p := make([]byte, 20+8+4)
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	p[8] = 64
	p[9] = 17
	s4, d4 := src.As4(), dst.As4()
	copy(p[12:], s4[:])
	copy(p[16:], d4[:])
	binary.BigEndian.PutUint16(p[24:], 12)
	binary.BigEndian.PutUint32(p[28:], seq)
	return p
}

// TestDevicesRedundantStreamSurvivesCut runs real wireguard-go devices: a
// sends to b over two links, the active one and a secondary one getting a
// copy of every packet. The active link is cut halfway through a stream
// and a never fails over: every packet of the stream still comes out of
// b's TUN, and none comes out twice (b's WireGuard drops the second copy).
func TestDevicesRedundantStreamSurvivesCut(t *testing.T) {
	a := newNode(t, "a", 11, "10.9.5.1", true)
	b := newNode(t, "b", 111, "10.9.5.2", true)
	l1, l2 := newLink(t, b), newLink(t, b)
	a.addPeer(t, b, []Path{{"direct", l1.Addr()}, {"consumer", l2.Addr()}})
	b.addPeer(t, a, []Path{{"direct", a.addr()}})
	ping(t, a, b) // session up
	a.bind.SetSecondary("b", 1)

	const n = 400
	got := make(map[uint32]int)
	collect := func(until uint32) {
		timer := time.NewTimer(failAfter)
		defer timer.Stop()
		for {
			select {
			case pkt := <-b.tun.Inbound:
				if len(pkt) != 32 {
					continue // the setup ping
				}
				seq := binary.BigEndian.Uint32(pkt[28:])
				got[seq]++
				if seq == until {
					return
				}
			case <-timer.C:
				t.Fatalf("packet %d never arrived; got %d distinct", until, len(got))
			}
		}
	}
	for seq := range uint32(n) {
		if seq == n/2 {
			l1.Cut(true)
		}
		a.tun.Outbound <- udpPacket(a.ip, b.ip, seq)
		if seq%50 == 49 {
			collect(seq) // stay far below the links' queues
		}
	}
	// The marker crosses only the secondary link, behind every earlier copy
	// sent there, so every copy of the stream has reached b by now.
	a.tun.Outbound <- udpPacket(a.ip, b.ip, n)
	collect(n)
	for seq := range uint32(n) {
		if got[seq] != 1 {
			t.Errorf("packet %d came out of b's TUN %d times, want once", seq, got[seq])
		}
	}
	if s := l1.Stats(); s.ToTarget.Cut == 0 {
		t.Fatalf("nothing was lost on the cut link: %+v", s)
	}
	if pk, _ := a.bind.Redundant("b"); pk < n {
		t.Fatalf("%d copies sent, want at least %d", pk, n)
	}
	// b credits the secondary link's source with data: the copies it
	// delivered after the cut, and copies of sampled messages before it.
	var srcs int
	for _, s := range b.bind.RxStats("a") {
		if s.Packets > 0 {
			srcs++
		}
	}
	if srcs < 2 {
		t.Fatalf("b credited %d sources, want both links: %+v", srcs, b.bind.RxStats("a"))
	}
}
