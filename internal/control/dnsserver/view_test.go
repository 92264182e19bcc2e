package dnsserver

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, x := range s {
		out[i] = netip.MustParseAddr(x)
	}
	return out
}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, x := range s {
		out[i] = netip.MustParsePrefix(x)
	}
	return out
}

// testView: we are provider-a (pods 10.244.0.0/16); provider-b and
// provider-c are peers whose pods our pods reach at per-pod /32s (the
// relay's pod mapping) inside 10.92.0.0/16; web.shop has endpoints in all
// three clusters and one (10.91.0.9, a pod of the consumer) that no relay
// routes.
func testView(costB, costC time.Duration, healthyB, healthyC bool) *View {
	return &View{
		Self: Cluster{Name: "provider-a", Overlay: addrs("100.80.0.1"), Routes: prefixes("10.244.0.0/16"), Healthy: true},
		Peers: []Cluster{
			{Name: "provider-b", Overlay: addrs("100.80.0.2", "fd00::2"), Routes: prefixes("100.80.0.2/32", "10.92.0.12/32", "10.92.0.13/32"), Healthy: healthyB, Cost: costB},
			{Name: "provider-c", Overlay: addrs("100.80.0.3"), Routes: prefixes("100.80.0.3/32", "10.92.0.20/32"), Healthy: healthyC, Cost: costC},
		},
		Services: map[string][]netip.Addr{
			"web.shop":    addrs("10.92.0.20", "10.92.0.12", "10.91.0.9", "10.244.1.5", "10.92.0.13"),
			"remote.shop": addrs("10.92.0.20", "10.92.0.12"),
		},
	}
}

func TestServiceOrderFollowsPathCost(t *testing.T) {
	for _, tc := range []struct {
		name             string
		costB, costC     time.Duration
		healthyB, healty bool
		key              string
		want             []netip.Addr
	}{
		{"b nearer", 10 * time.Millisecond, 30 * time.Millisecond, true, true, "web.shop",
			addrs("10.244.1.5", "10.92.0.12", "10.92.0.13", "10.92.0.20")},
		{"c nearer after latencies change", 40 * time.Millisecond, 30 * time.Millisecond, true, true, "web.shop",
			addrs("10.244.1.5", "10.92.0.20", "10.92.0.12", "10.92.0.13")},
		{"equal cost: by name", 30 * time.Millisecond, 30 * time.Millisecond, true, true, "web.shop",
			addrs("10.244.1.5", "10.92.0.12", "10.92.0.13", "10.92.0.20")},
		{"b down: dropped", 10 * time.Millisecond, 30 * time.Millisecond, false, true, "web.shop",
			addrs("10.244.1.5", "10.92.0.20")},
		{"no local endpoint", 10 * time.Millisecond, 30 * time.Millisecond, true, true, "remote.shop",
			addrs("10.92.0.12", "10.92.0.20")},
		{"all down", 10 * time.Millisecond, 30 * time.Millisecond, false, false, "remote.shop", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testView(tc.costB, tc.costC, tc.healthyB, tc.healty)
			got, ok := v.ServiceAddrs(tc.key)
			if !ok || !slices.Equal(got, tc.want) {
				t.Fatalf("ServiceAddrs(%s) = %v, %v; want %v", tc.key, got, ok, tc.want)
			}
		})
	}
	if _, ok := testView(0, 0, true, true).ServiceAddrs("none.shop"); ok {
		t.Fatal("an unknown Service is known")
	}
}

func TestPeerAddrs(t *testing.T) {
	v := testView(10*time.Millisecond, 20*time.Millisecond, true, false)
	for _, tc := range []struct {
		name  string
		want  []netip.Addr
		known bool
	}{
		{"provider-a", addrs("100.80.0.1"), true},
		{"provider-b", addrs("100.80.0.2", "fd00::2"), true},
		{"provider-c", nil, true}, // unreachable: known, nothing healthy
		{"provider-x", nil, false},
	} {
		got, ok := v.PeerAddrs(tc.name)
		if ok != tc.known || !slices.Equal(got, tc.want) {
			t.Errorf("PeerAddrs(%s) = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.known)
		}
	}
}
