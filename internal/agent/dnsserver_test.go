package agent_test

import (
	"context"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/demo/linkem"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// TestDNSResponderFollowsTopology: provider-a answers for a Service with
// endpoints behind itself, provider-b and consumer (the third relay),
// local first, then by measured path latency; when latencies change the
// order changes, and a cluster whose path is cut is dropped (and its relay
// name has no address) until the path comes back.
func TestDNSResponderFollowsTopology(t *testing.T) {
	a, m, ab, ac := startDNSTriangle(t)
	addr := agent.DNSServerAddrs(a)[0].String()
	local, atB, atC := pod(1, 0).Addr().Next(), pod(2, 0).Addr().Next(), pod(3, 0).Addr().Next()
	if err := a.SetServiceEndpoints(context.Background(), map[string][]netip.Addr{"web.shop": {atC, atB, local}}); err != nil {
		t.Fatal(err)
	}
	waitAnswer := func(name string, want []netip.Addr) {
		t.Helper()
		waitFor(t, waitTimeout, name+" = "+addrList(want), func() bool {
			return slices.Equal(lookupA(t, addr, name), want)
		})
	}
	waitAnswer("web.shop.relay.local.", []netip.Addr{local, atB, atC})
	waitAnswer("provider-b.relay.local.", []netip.Addr{overlay(2)})

	ab.Set(linkem.Config{Delay: 40 * time.Millisecond})
	waitAnswer("web.shop.relay.local.", []netip.Addr{local, atC, atB})

	ac.Cut(true)
	waitAnswer("web.shop.relay.local.", []netip.Addr{local, atB})
	waitAnswer("consumer.relay.local.", nil)
	ac.Cut(false)
	waitAnswer("web.shop.relay.local.", []netip.Addr{local, atC, atB}) // B is still at 40 ms

	if got := lookupA(t, addr, "example.com."); got != nil {
		t.Fatalf("example.com answered %v", got)
	}
	if n := sumMetric(t, m, "relay_dns_queries_total", map[string]string{"type": "A", "rcode": "REFUSED"}); n != 1 {
		t.Errorf("relay_dns_queries_total{type=A,rcode=REFUSED} = %v, want 1", n)
	}
}

// startDNSTriangle runs provider-a, provider-b and consumer, A linked to B
// (ab, 5 ms) and to the consumer (ac, 20 ms), until the test ends. A runs
// the DNS responder on a free loopback port and reports to m.
func startDNSTriangle(t *testing.T) (a *agent.Agent, m *metrics.Metrics, ab, ac *mesh.Path) {
	log := testLogger(t)
	f := mesh.New(log)
	t.Cleanup(func() { _ = f.Close() })
	var relays []*mesh.Relay
	for i, name := range []string{relayA, relayB, relayC} {
		r, err := f.Add(&mesh.Relay{Name: name, Overlay: netip.PrefixFrom(overlay(i+1), 32),
			Exports: netip.PrefixFrom(pod(i+1, 0).Addr(), 24).Masked()})
		if err != nil {
			t.Fatal(err)
		}
		relays = append(relays, r)
	}
	ab, err := f.Connect(relayA, relayB, "direct", linkem.Config{Delay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ac, err = f.Connect(relayA, relayC, "direct", linkem.Config{Delay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	m = metrics.New()
	for i, r := range relays {
		text := f.RenderConfig(r)
		if i == 0 {
			text += "dnsServer: {listen: ['127.0.0.1:0'], ttl: 1s}\n"
		}
		cfg, err := config.Parse([]byte(text))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		opts := agent.Options{Logger: log.With("relay", r.Name), AdminAddr: "-"}
		if i == 0 {
			opts.Metrics = m
		}
		ag, err := agent.New(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			a = ag
		}
		wg.Go(func() { _ = ag.Run(ctx) })
	}
	return a, m, ab, ac
}

// lookupA asks the DNS responder at addr for name's A records.
func lookupA(t *testing.T, addr, name string) []netip.Addr {
	t.Helper()
	r, _, err := (&dns.Client{Timeout: 2 * time.Second}).Exchange(query(name, dns.TypeA), addr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out []netip.Addr
	for _, rr := range r.Answer {
		if a, ok := rr.(*dns.A); ok {
			ip, _ := netip.AddrFromSlice(a.A)
			out = append(out, ip.Unmap())
		}
	}
	return out
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

func addrList(as []netip.Addr) string {
	s := "["
	for i, a := range as {
		if i > 0 {
			s += " "
		}
		s += a.String()
	}
	return s + "]"
}
