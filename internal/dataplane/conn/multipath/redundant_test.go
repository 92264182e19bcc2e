package multipath

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// transport returns a transport message to our index idx with counter ctr
// and a tag derived from tag.
func transport(idx uint32, ctr uint64, n int, tag byte) []byte {
	p := wgMessage(msgTransport, idx, n)
	binary.LittleEndian.PutUint64(p[offCounter:], ctr)
	for i := n - tagSize; i < n; i++ {
		p[i] = tag
	}
	return p
}

func TestSecondaryGetsCopiesOfTransportOnly(t *testing.T) {
	b, inner, _ := open(t, 1)
	b.SetPeer("b", []Path{pathA, pathB, pathC})
	ep := peerEP(t, b, "b")
	b.SetSecondary("b", 1)
	if p, ok := b.Secondary("b"); !ok || p != pathB {
		t.Fatalf("Secondary = %v, %v", p, ok)
	}
	init := wgMessage(msgInitiation, 9, sizeInitiation)
	data := transport(9, 1, 100, 1)
	keepalive := transport(9, 2, minTransportSize, 2)
	if err := b.Send([][]byte{init, data, keepalive}, ep); err != nil {
		t.Fatal(err)
	}
	sent := inner.Sent()
	var toA, toB int
	for _, s := range sent {
		switch s.Addr {
		case pathA.Addr:
			toA++
		case pathB.Addr:
			toB++
			if messageType(s.Pkt) != msgTransport {
				t.Fatalf("a handshake was copied to the secondary path")
			}
		default:
			t.Fatalf("sent to %v", s.Addr)
		}
	}
	if toA != 3 || toB != 2 {
		t.Fatalf("%d to the active path, %d to the secondary; want 3 and 2", toA, toB)
	}
	if pk, by := b.Redundant("b"); pk != 2 || by != 100+minTransportSize {
		t.Fatalf("Redundant = %d packets, %d bytes", pk, by)
	}
	if got := b.TxData("b"); got != 1 {
		t.Fatalf("TxData = %d, want 1 (the keepalive carries no packet)", got)
	}

	// The secondary turned active: no copies to itself.
	b.SetActive("b", 1)
	if _, ok := b.Secondary("b"); ok {
		t.Fatal("the active path is still the secondary")
	}
	b.Send([][]byte{transport(9, 3, 100, 3)}, ep)
	if sent := inner.Sent(); len(sent) != 1 || sent[0].Addr != pathB.Addr {
		t.Fatalf("sent %+v, want one message to the new active path", sent)
	}
	b.SetSecondary("b", 2)
	b.SetSecondary("b", -1)
	b.Send([][]byte{transport(9, 4, 100, 4)}, ep)
	if sent := inner.Sent(); len(sent) != 1 {
		t.Fatalf("sent %+v after SetSecondary(-1), want one message", sent)
	}
}

// The evidence rule: a copy of a delivered message, from another known
// source, counts once for its source and is dropped before WireGuard; a
// repeat of it on the same source, a copy from a stranger, and a message
// whose tag differs count for nothing.
func TestCopiesCountOnceForTheirPath(t *testing.T) {
	b, inner, fn := open(t, 4)
	now := time.Unix(1000, 0)
	b.SetClock(func() time.Time { return now })
	b.SetPeer("b", []Path{pathA, pathB})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	stranger := netip.MustParseAddrPort("203.0.113.9:9")

	inject := func(p []byte, from netip.AddrPort) {
		if err := inner.Inject(p, from); err != nil {
			t.Fatal(err)
		}
	}
	// The first copy of counter 32 arrives over A and is delivered.
	inject(transport(0xB1, 32, 100, 7), pathA.Addr)
	sizes, bufs, _ := receive(t, fn, 1)
	authenticate(b, bufs, sizes)

	now = now.Add(time.Second)
	inject(transport(0xB1, 32, 100, 7), pathB.Addr) // its copy over B
	inject(transport(0xB1, 32, 100, 7), pathB.Addr) // the copy again over B
	inject(transport(0xB1, 32, 100, 7), stranger)   // from a stranger
	inject(transport(0xB1, 32, 100, 8), pathB.Addr) // other tag: not a copy
	sizes, _, _ = receive(t, fn, 4)
	if sizes[0] != 0 || sizes[1] != 0 {
		t.Fatalf("copies passed to WireGuard: sizes %v", sizes)
	}
	if sizes[2] == 0 || sizes[3] == 0 {
		t.Fatalf("a stranger's message or a different one was dropped: sizes %v", sizes)
	}
	if got := rxFrom(b.RxStats("b"), pathB.Addr); got != 1 {
		t.Fatalf("B credited %d times, want once: %+v", got, b.RxStats("b"))
	}
	if got := rxFrom(b.RxStats("b"), stranger); got != 0 {
		t.Fatalf("the stranger was credited: %+v", b.RxStats("b"))
	}
	if got := b.LastRx("b", pathB.Addr); !got.Equal(now) {
		t.Fatalf("LastRx(B) = %v, want %v", got, now)
	}
	// A copy over A of a message delivered over B (B now known) counts.
	inject(transport(0xB1, 48, 100, 9), pathB.Addr)
	sizes, bufs, _ = receive(t, fn, 1)
	authenticate(b, bufs, sizes)
	inject(transport(0xB1, 48, 100, 9), pathA.Addr)
	if sizes, _, _ = receive(t, fn, 1); sizes[0] != 0 {
		t.Fatal("copy over A passed to WireGuard")
	}
	if got := rxFrom(b.RxStats("b"), pathA.Addr); got != 2 {
		t.Fatalf("A credited %d, want 2 (its delivered message and a copy)", got)
	}
}

func TestCopyWindow(t *testing.T) {
	var w copyWindow
	steps := []struct {
		idx  uint32
		ctr  uint64
		want bool
	}{
		{1, 160, true}, {1, 160, false}, {1, 144, true}, {1, 144, false},
		{1, 16 * 100, true}, {1, 160, false}, // fell behind the window
		{1, 16 * 99, true}, {2, 160, true}, {2, 160, false},
	}
	for i, s := range steps {
		if got := w.fresh(s.idx, s.ctr); got != s.want {
			t.Fatalf("step %d: fresh(%d, %d) = %v", i, s.idx, s.ctr, got)
		}
	}
}
