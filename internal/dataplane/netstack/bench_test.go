package netstack

import (
	"io"
	"math/rand"
	"net"
	"net/netip"
	"testing"
)

// BenchmarkNetstackTCP measures bulk TCP through two Netstacks wired back to
// back by a tuntest pair (MTU 1420), with gVisor's defaults ("untuned") and
// with New's tuning ("tuned"). "listener" ends in a ListenTCP socket
// inside stack b; "forwarded" goes through b's TCP forwarder to a loopback
// sink on the host; "lossy1pct" is "listener" with 1% of the packets from
// a to b dropped (seeded), where SACK and the congestion control matter.
//
//	go test -run '^$' -bench NetstackTCP -benchtime 200x ./internal/dataplane/netstack/
func BenchmarkNetstackTCP(b *testing.B) {
	for _, tc := range []struct {
		name   string
		tuning nsTuning
	}{{"untuned", nsUntuned}, {"tuned", nsTuned}} {
		b.Run(tc.name+"/listener", func(b *testing.B) {
			m := newTestMesh(b, tc.tuning)
			ln, err := m.b.ListenTCP(netip.MustParseAddrPort("10.0.0.2:5001"))
			if err != nil {
				b.Fatal(err)
			}
			benchBulk(b, m, ln, "10.0.0.2:5001")
		})
		b.Run(tc.name+"/lossy1pct", func(b *testing.B) {
			rng := rand.New(rand.NewSource(1))
			m := newLossyMesh(b, tc.tuning, func() bool { return rng.Intn(100) == 0 })
			ln, err := m.b.ListenTCP(netip.MustParseAddrPort("10.0.0.2:5001"))
			if err != nil {
				b.Fatal(err)
			}
			benchBulk(b, m, ln, "10.0.0.2:5001")
		})
		b.Run(tc.name+"/forwarded", func(b *testing.B) {
			m := newTestMesh(b, tc.tuning)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			port := addrPort(ln.Addr()).Port()
			benchBulk(b, m, ln, netip.AddrPortFrom(netip.MustParseAddr("10.99.0.1"), port).String())
		})
	}
}

// benchBulk sends b.N chunks of 64 KiB from stack a to addr and waits until
// the sink behind ln has read them all.
func benchBulk(b *testing.B, m *testMesh, ln net.Listener, addr string) {
	const chunk = 64 << 10
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	c, err := m.a.DialContext(b.Context(), "tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, chunk)
	b.SetBytes(chunk)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	if n := <-got; n != int64(b.N)*chunk {
		b.Fatalf("sink read %d bytes, want %d", n, int64(b.N)*chunk)
	}
	b.StopTimer()
}
