package pipe

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"testing"

	"github.com/liqo-relay/relay/internal/core/packet"
)

var (
	pp = netip.MustParsePrefix
	pa = netip.MustParseAddr
)

// testRules is provider A: pods 10.244.0.0/16 (and fd00:244::/48), relay
// 10.255.0.1. Peer "b" overlaps: A sees B's pods as 10.72.0.0/16, B sees
// A's as 10.71.0.0/16. Peer "c" does not overlap and is not translated.
func testRules(t testing.TB) *Compiled {
	t.Helper()
	tr, err := packet.NewTranslator([]packet.Mapping{
		{Real: pp("10.244.0.0/16"), As: pp("10.71.0.0/16")},
		{Real: pp("fd00:244::/48"), As: pp("fd71::/48")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(Rules{
		Peers: []PeerRules{
			{Name: "b", Prefixes: []netip.Prefix{pp("10.72.0.0/16"), pp("fd72::/48")}, Translator: tr},
			{Name: "c", Prefixes: []netip.Prefix{pp("10.30.0.0/16")}},
		},
		Local:   []netip.Prefix{pp("10.244.0.0/16"), pp("fd00:244::/48"), pp("10.255.0.1/32"), pp("fd00:255::1/128")},
		Exports: []netip.Prefix{pp("10.244.0.0/16"), pp("fd00:244::/48")},
		Relay4:  pa("10.255.0.1"),
		Relay6:  pa("fd00:255::1"),
		MTU:     1420,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testOffset = 16

func makeBufs(n int) ([][]byte, []int) {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, testOffset+2048)
		for j := range testOffset {
			bufs[i][j] = 0xee
		}
	}
	return bufs, make([]int, n)
}

func TestReadPipeline(t *testing.T) {
	inner := newFakeDev()
	d := Wrap(inner)
	d.SetRules(testRules(t))
	quote := ipPacket("10.72.2.2", "10.244.1.1", protoUDP, udp(4))
	inner.queue(
		ipPacket("10.244.1.1", "10.72.2.2", protoUDP, udp(20)),             // 0: to b, translated
		ipPacket("192.168.9.9", "10.72.2.2", protoUDP, udp(20)),            // 1: bad source
		[]byte{0x45, 0, 0, 0, 0, 0},                                        // 2: malformed
		ipPacket("172.18.0.1", "10.72.2.2", protoICMP, icmpErr(11, quote)), // 3: foreign ICMP error
		ipPacket("10.244.1.1", "10.30.0.5", protoTCP, tcpSYN(1460, false)), // 4: to c, clamped
		ipPacket("10.244.1.1", "8.8.8.8", protoUDP, udp(20)),               // 5: no peer: passes
		ipPacket("fd00:244::7", "fd72::8", protoTCP, tcpSYN(1440, false)),  // 6: v6 to b: translated, clamped
	)
	bufs, sizes := makeBufs(8)
	n, err := d.Read(bufs, sizes, testOffset)
	if err != nil {
		t.Fatal(err)
	}
	type route struct{ src, dst string }
	wants := []route{
		{"10.71.1.1", "10.72.2.2"},
		{"10.255.0.1", "10.72.2.2"},
		{"10.244.1.1", "10.30.0.5"},
		{"10.244.1.1", "8.8.8.8"},
		{"fd71::7", "fd72::8"},
	}
	if n != len(wants) {
		t.Fatalf("Read = %d packets, want %d", n, len(wants))
	}
	for i, w := range wants {
		for j := range testOffset {
			if bufs[i][j] != 0xee {
				t.Fatalf("packet %d: bytes before offset were written", i)
			}
		}
		p := bufs[i][testOffset : testOffset+sizes[i]]
		s, dst := addrs(p)
		if s != pa(w.src) || dst != pa(w.dst) {
			t.Errorf("packet %d: %v -> %v, want %s -> %s", i, s, dst, w.src, w.dst)
		}
		if !valid(p) {
			t.Errorf("packet %d: invalid checksums", i)
		}
	}
	// The quoted packet inside the ICMP error was translated too.
	icmp := bufs[1][testOffset : testOffset+sizes[1]]
	if qs, qd := addrs(icmp[28:]); qs != pa("10.72.2.2") || qd != pa("10.71.1.1") {
		t.Errorf("quoted packet %v -> %v", qs, qd)
	}
	if mss := binary.BigEndian.Uint16(bufs[2][testOffset+20+22:]); mss != 1380 {
		t.Errorf("v4 MSS = %d, want 1380", mss)
	}
	if mss := binary.BigEndian.Uint16(bufs[4][testOffset+40+22:]); mss != 1360 {
		t.Errorf("v6 MSS = %d, want 1360", mss)
	}
	want := Counters{DroppedBadSource: 1, DroppedMalformed: 1, TranslatedTX: 3, MSSClamped: 2, ICMPSourceRewritten: 1}
	if got := d.Counters(); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
}

func TestWritePipeline(t *testing.T) {
	inner := newFakeDev()
	d := Wrap(inner)
	d.SetRules(testRules(t))
	pkts := [][]byte{
		ipPacket("10.72.2.2", "10.71.1.1", protoUDP, udp(20)),             // from b to our pod: translated
		ipPacket("10.72.2.2", "10.99.0.1", protoUDP, udp(20)),             // not ours: bad dest
		ipPacket("10.30.0.5", "10.244.1.1", protoTCP, tcpSYN(1460, true)), // from c, SYN-ACK clamped
		{0x60, 1, 2}, // malformed
		ipPacket("10.30.0.5", "10.71.1.1", protoUDP, udp(20)), // from c (untranslated): 10.71 is not ours
	}
	bufs := make([][]byte, len(pkts))
	for i, p := range pkts {
		bufs[i] = append(make([]byte, testOffset), p...)
	}
	orig := append([][]byte(nil), bufs...)
	n, err := d.Write(bufs, testOffset)
	if err != nil || n != len(pkts) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(pkts))
	}
	for i := range bufs {
		if &bufs[i][0] != &orig[i][0] {
			t.Fatal("caller's bufs were reordered")
		}
	}
	if len(inner.written) != 2 {
		t.Fatalf("inner got %d packets, want 2", len(inner.written))
	}
	if s, dst := addrs(inner.written[0]); s != pa("10.72.2.2") || dst != pa("10.244.1.1") {
		t.Errorf("packet 0: %v -> %v", s, dst)
	}
	if mss := binary.BigEndian.Uint16(inner.written[1][20+22:]); mss != 1380 {
		t.Errorf("MSS = %d, want 1380", mss)
	}
	for i, p := range inner.written {
		if !valid(p) {
			t.Errorf("packet %d: invalid checksums", i)
		}
	}
	want := Counters{DroppedBadDest: 2, DroppedMalformed: 1, TranslatedRX: 1, MSSClamped: 1}
	if got := d.Counters(); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
}

func TestWriteInnerError(t *testing.T) {
	inner := newFakeDev()
	inner.writeMax, inner.writeErr = 1, errors.New("boom")
	d := Wrap(inner)
	d.SetRules(testRules(t))
	bufs := [][]byte{
		append(make([]byte, testOffset), ipPacket("10.72.2.2", "10.99.0.1", protoUDP, udp(1))...), // dropped
		append(make([]byte, testOffset), ipPacket("10.30.0.5", "10.244.1.1", protoUDP, udp(1))...),
		append(make([]byte, testOffset), ipPacket("10.30.0.5", "10.244.1.2", protoUDP, udp(1))...),
	}
	n, err := d.Write(bufs, testOffset)
	if n != 2 || err == nil {
		t.Fatalf("Write = %d, %v; want 2 (1 dropped + 1 written), boom", n, err)
	}
	// Short buffers are malformed, not a panic.
	if n, err := d.Write([][]byte{make([]byte, 3)}, testOffset); n != 1 || err != nil {
		t.Fatalf("short buffer: %d, %v", n, err)
	}
}

func TestNoRulesDropsAll(t *testing.T) {
	inner := newFakeDev()
	d := Wrap(inner)
	inner.queue(ipPacket("10.244.1.1", "10.72.2.2", protoUDP, udp(1)))
	bufs, sizes := makeBufs(4)
	if n, err := d.Read(bufs, sizes, testOffset); n != 0 || err != nil {
		t.Fatalf("Read without rules = %d, %v", n, err)
	}
	w := [][]byte{append(make([]byte, testOffset), ipPacket("10.72.2.2", "10.71.1.1", protoUDP, udp(1))...)}
	if n, err := d.Write(w, testOffset); n != 1 || err != nil {
		t.Fatalf("Write without rules = %d, %v", n, err)
	}
	if len(inner.written) != 0 {
		t.Fatal("inner device got packets without rules")
	}
	if c := d.Counters(); c.DroppedNoRules != 2 {
		t.Fatalf("DroppedNoRules = %d", c.DroppedNoRules)
	}
	// Setting rules lets traffic through; setting nil stops it again.
	d.SetRules(testRules(t))
	if n, _ := d.Write(w, testOffset); n != 1 || len(inner.written) != 1 {
		t.Fatal("rules did not take effect")
	}
	d.SetRules(nil)
	if d.Write(w, testOffset); len(inner.written) != 1 {
		t.Fatal("nil rules did not stop traffic")
	}
}

func TestPassThrough(t *testing.T) {
	inner := newFakeDev()
	d := Wrap(inner)
	if mtu, _ := d.MTU(); mtu != 1420 {
		t.Error("MTU not passed through")
	}
	if name, _ := d.Name(); name != "fake0" {
		t.Error("Name not passed through")
	}
	if d.BatchSize() != 128 || d.File() != nil || d.Events() != inner.events {
		t.Error("BatchSize/File/Events not passed through")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, open := <-inner.events; open {
		t.Error("Close not passed through")
	}
}

// TestConcurrentReload swaps rules while batches flow both ways; run with
// -race. Every packet is either delivered or counted, whichever rules it met.
func TestConcurrentReload(t *testing.T) {
	inner := newFakeDev()
	d := Wrap(inner)
	c := testRules(t)
	pkt := append(make([]byte, testOffset), ipPacket("10.72.2.2", "10.71.1.1", protoUDP, udp(8))...)
	const writers, batches = 4, 200
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range batches {
				b := append([]byte(nil), pkt...)
				if n, err := d.Write([][]byte{b}, testOffset); n != 1 || err != nil {
					t.Errorf("Write = %d, %v", n, err)
					return
				}
			}
		})
	}
	for i := range 500 {
		if i%2 == 0 {
			d.SetRules(c)
		} else {
			d.SetRules(nil)
		}
	}
	wg.Wait()
	cnt := d.Counters()
	if got := uint64(len(inner.written)) + cnt.DroppedNoRules; got != writers*batches {
		t.Fatalf("delivered %d + dropped %d != %d", len(inner.written), cnt.DroppedNoRules, writers*batches)
	}
}
