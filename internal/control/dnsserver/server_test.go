package dnsserver

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startServer runs a Server for h on 127.0.0.1:0.
func startServer(t *testing.T, h *Handler) netip.AddrPort {
	t.Helper()
	s, err := Listen([]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0")}, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s.Addrs()[0]
}

// TestServerTCPFallback: a client that gets a truncated UDP answer asks
// again over TCP and gets it whole, from the real sockets.
func TestServerTCPFallback(t *testing.T) {
	v, _ := bigView(60)
	h, _ := testHandler(v, time.Now)
	addr := startServer(t, h)
	q := query("big.shop.relay.local.", dns.TypeA)
	udp, _, err := (&dns.Client{Net: "udp", Timeout: 5 * time.Second}).Exchange(q, addr.String())
	if err != nil || !udp.Truncated {
		t.Fatalf("UDP: %v, truncated %v; want a truncated answer", err, udp != nil && udp.Truncated)
	}
	tcp, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(q, addr.String())
	if err != nil || tcp.Truncated || len(tcp.Answer) != 60 {
		t.Fatalf("TCP: %v; want all 60 answers", err)
	}
}

// TestServerListenErrors: an address that cannot be listened on is an
// error naming the setting, and nothing stays open.
func TestServerListenErrors(t *testing.T) {
	h, _ := testHandler(&View{}, time.Now)
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	busy := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	_, err = Listen([]netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:0"), busy}, h)
	if err == nil || !strings.Contains(err.Error(), "dnsServer.listen[1]") || !strings.Contains(err.Error(), busy.String()) {
		t.Fatalf("Listen on a busy address: %v", err)
	}
}

// TestServerFloodDoesNotStarveOthers: one source floods the real server
// at 80 times its rate limit; another source's queries, sent meanwhile with the
// usual resolver retries, all get answers, and the flood is limited.
func TestServerFloodDoesNotStarveOthers(t *testing.T) {
	var limited atomic.Int64
	h := NewHandler(HandlerConfig{Zone: "relay.local.", TTL: 5 * time.Second, RateLimit: 50, Burst: 50,
		Hooks: Hooks{Limited: func() { limited.Add(1) }}})
	h.SetView(testView(0, 0, true, true))
	addr := startServer(t, h)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)}, net.UDPAddrFromAddrPort(addr))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		b, _ := query("provider-b.relay.local.", dns.TypeA).Pack()
		// 4000 queries per second, 80 times the limit: a flood the
		// limiter must cut down, yet one the read loop keeps up with
		// on a loaded machine, so that what is tested is the limiter
		// and not the kernel's socket buffer (an unpaced flood fills it
		// and drops everyone's packets before any code of ours runs).
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for range 4 {
				_, _ = c.Write(b)
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()

	// The calm source asks only once the flood is being limited, so that
	// its queries meet a limiter under pressure however slowly the flood
	// starts on a loaded machine.
	// real: polls the server under a flood over real UDP sockets.
	for deadline := time.Now().Add(30 * time.Second); limited.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the flood was never limited")
		}
	}
	cl := &dns.Client{Net: "udp", Timeout: time.Second,
		Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 3)}}}
	for i := range 20 {
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			var m *dns.Msg
			if m, _, err = cl.Exchange(query("provider-b.relay.local.", dns.TypeA), addr.String()); err == nil {
				if m.Rcode != dns.RcodeSuccess || len(m.Answer) != 1 {
					t.Fatalf("query %d: %v", i, m)
				}
				break
			}
		}
		if err != nil {
			t.Fatalf("query %d of the calm source got no answer in 5 tries: %v", i, err)
		}
	}
}
