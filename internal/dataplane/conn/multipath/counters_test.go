package multipath

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

// Counters reads what RxStats, TxBytes and TxData read, reusing the
// caller's buffer, and reports an unknown peer.
func TestCountersMatchTheSingleReads(t *testing.T) {
	b, inner, fn := open(t, 8)
	b.SetPeer("b", []Path{pathA, pathB})
	b.SetPeer("c", []Path{pathC})
	epB := peerEP(t, b, "b")
	srcX := netip.MustParseAddrPort("192.0.2.1:51820")
	srcY := netip.MustParseAddrPort("198.51.100.99:31000")

	// An initiation teaches b's index; two data messages and a keepalive
	// go out to b.
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, epB)
	b.Send([][]byte{wgMessage(msgTransport, 7, 96), wgMessage(msgTransport, 7, 64), wgMessage(msgTransport, 7, minTransportSize)}, epB)
	for _, in := range []struct {
		n    int
		from netip.AddrPort
	}{{96, srcX}, {32, srcY}, {48, srcX}} {
		if err := inner.Inject(wgMessage(msgTransport, 0xB1, in.n), in.from); err != nil {
			t.Fatal(err)
		}
	}
	sizes, bufs, _ := receive(t, fn, 8)
	authenticate(b, bufs, sizes)

	buf := make([]Source, 0, 1)
	for _, name := range []string{"b", "c"} {
		c, ok := b.Counters(name, buf)
		if !ok {
			t.Fatalf("Counters(%s): unknown peer", name)
		}
		if got, want := c.Sources, b.RxStats(name); !slices.Equal(got, want) {
			t.Errorf("Counters(%s).Sources = %+v, RxStats %+v", name, got, want)
		}
		if c.TxBytes != b.TxBytes(name) || c.TxData != b.TxData(name) {
			t.Errorf("Counters(%s) tx %d bytes %d data, want %d and %d", name, c.TxBytes, c.TxData, b.TxBytes(name), b.TxData(name))
		}
		buf = c.Sources
	}
	buf = make([]Source, 1, maxSources)
	c, _ := b.Counters("b", buf)
	if want := []Source{{srcX, 2, 144}, {srcY, 1, 32}}; !slices.Equal(sortedSources(c.Sources), want) {
		t.Errorf("Counters(b).Sources = %+v, want %+v", c.Sources, want)
	}
	if want := uint64(sizeInitiation + 96 + 64 + minTransportSize); c.TxBytes != want || c.TxData != 2 {
		t.Errorf("Counters(b) tx %d bytes %d data, want %d bytes 2 data", c.TxBytes, c.TxData, want)
	}
	if &c.Sources[0] != &buf[0] {
		t.Error("Counters did not reuse the buffer it was given")
	}
	if c, ok := b.Counters("nobody", buf); ok || len(c.Sources) != 0 || c.TxBytes != 0 || c.TxData != 0 {
		t.Errorf("Counters(nobody) = %+v, %v; want nothing, false", c, ok)
	}
}

// LastRxFrom is the later of the two addresses' LastRx, skipping invalid
// and unknown ones; zero for an unknown peer or when neither delivered.
func TestLastRxFromIsTheLaterOfTwo(t *testing.T) {
	b, inner, fn := open(t, 1)
	now := time.Unix(1000, 0)
	b.SetClock(func() time.Time { return now })
	b.SetPeer("b", []Path{pathA, pathB})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))
	stranger := netip.MustParseAddrPort("203.0.113.9:9")
	deliver := func(from netip.AddrPort) {
		t.Helper()
		if err := inner.Inject(wgMessage(msgTransport, 0xB1, 64), from); err != nil {
			t.Fatal(err)
		}
		sizes, bufs, _ := receive(t, fn, 1)
		authenticate(b, bufs, sizes)
	}
	if got := b.LastRxFrom("b", pathA.Addr, pathB.Addr); !got.IsZero() {
		t.Fatalf("before any data: %v", got)
	}
	now = now.Add(time.Second) // past the clock's base (nanos are at least 1)
	deliver(pathA.Addr)
	tA := now
	now = now.Add(time.Second)
	deliver(pathB.Addr)
	tB := now
	now = now.Add(time.Second)
	for _, c := range []struct {
		a1, a2 netip.AddrPort
		want   time.Time
	}{
		{pathA.Addr, pathB.Addr, tB},
		{pathB.Addr, pathA.Addr, tB},
		{pathA.Addr, netip.AddrPort{}, tA},
		{netip.AddrPort{}, pathA.Addr, tA},
		{stranger, pathA.Addr, tA},
		{stranger, netip.AddrPort{}, time.Time{}},
	} {
		got := b.LastRxFrom("b", c.a1, c.a2)
		if !got.Equal(c.want) {
			t.Errorf("LastRxFrom(b, %v, %v) = %v, want %v", c.a1, c.a2, got, c.want)
		}
		later := b.LastRx("b", c.a1)
		if l2 := b.LastRx("b", c.a2); l2.After(later) {
			later = l2
		}
		if !got.Equal(later) {
			t.Errorf("LastRxFrom(b, %v, %v) = %v, the later LastRx is %v", c.a1, c.a2, got, later)
		}
	}
	if got := b.LastRxFrom("nobody", pathA.Addr, pathB.Addr); !got.IsZero() {
		t.Errorf("unknown peer: %v", got)
	}
}

func sortedSources(s []Source) []Source {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b Source) int { return a.Addr.Compare(b.Addr) })
	return s
}
