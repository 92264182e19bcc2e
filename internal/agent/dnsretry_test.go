package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// TestEndpointNameRetried: a path endpoint whose name does not resolve at
// start is shown unresolved with the error, is looked up again with
// backoff, and comes up once the name resolves, with no reload.
func TestEndpointNameRetried(t *testing.T) {
	log := testLogger(t)
	f := mesh.New(log)
	t.Cleanup(func() { _ = f.Close() })
	ra, err := f.Add(&mesh.Relay{Name: relayA, Overlay: netip.PrefixFrom(overlay(1), 32), Exports: netip.MustParsePrefix("10.244.1.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := f.Add(&mesh.Relay{Name: relayB, Overlay: netip.PrefixFrom(overlay(2), 32), Exports: netip.MustParsePrefix("10.244.2.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	path, err := f.Connect(relayA, relayB, "lb")
	if err != nil {
		t.Fatal(err)
	}
	const host = "gw-b.relay.test"
	ep := path.Endpoint(relayA)
	name := &movingName{host: host, addr: ep.Addr(), fail: errors.New("server misbehaving")}
	textA := strings.Replace(f.RenderConfig(ra), ep.String(), fmt.Sprintf("%s:%d", host, ep.Port()), 1)
	textA += "dns: {minTTL: 1s, retryMin: 100ms, retryMax: 200ms}\n"
	cfgA, err := config.Parse([]byte(textA))
	if err != nil {
		t.Fatalf("%v\n%s", err, textA)
	}
	cfgB, err := config.Parse([]byte(f.RenderConfig(rb)))
	if err != nil {
		t.Fatal(err)
	}
	mA := metrics.New()
	a, err := agent.New(cfgA, agent.Options{Logger: log.With("relay", relayA), AdminAddr: "-", Resolver: name, Metrics: mA})
	if err != nil {
		t.Fatal(err)
	}
	b, err := agent.New(cfgB, agent.Options{Logger: log.With("relay", relayB), AdminAddr: "-"})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = b.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	p := lbPath(t, a).path
	if p.State != status.PathUnresolved || p.Address != "" || !strings.Contains(p.DNSError, "server misbehaving") {
		t.Fatalf("before the name resolves: state %q address %q dnsError %q; want unresolved with the error", p.State, p.Address, p.DNSError)
	}
	waitFor(t, waitTimeout, "a second failed lookup", func() bool {
		return sumMetric(t, mA, "relay_dns_lookups_total", map[string]string{"result": "error"}) >= 2
	})
	name.setFail(nil)
	waitFor(t, waitTimeout, "path lb up at "+ep.String(), func() bool {
		p := lbPath(t, a).path
		return p.State == status.PathUp && p.Address == ep.String() && p.DNSError == ""
	})
	if n := sumMetric(t, mA, "relay_dns_endpoint_changes_total", nil); n != 1 {
		t.Errorf("relay_dns_endpoint_changes_total = %v, want 1", n)
	}
}
