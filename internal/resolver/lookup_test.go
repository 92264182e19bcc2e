package resolver

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/core/config"
)

var (
	v4a = netip.MustParseAddr("192.0.2.1")
	v4b = netip.MustParseAddr("192.0.2.2")
	v6a = netip.MustParseAddr("2001:db8::1")
)

// testClient asks only the servers given, with resolv.conf text conf (its
// search list and ndots) and hosts text hosts.
func testClient(t *testing.T, family config.Family, conf, hosts string, servers ...netip.AddrPort) *Client {
	t.Helper()
	dir := t.TempDir()
	rc, hp := filepath.Join(dir, "resolv.conf"), filepath.Join(dir, "hosts")
	if err := os.WriteFile(rc, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hp, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	s := config.DefaultDNS()
	s.Family = family
	s.Servers = servers
	s.Timeout = 300 * time.Millisecond
	return NewClient(s, WithResolvConf(rc), WithHosts(hp))
}

func TestLookupFamiliesAndTTL(t *testing.T) {
	srv := newTestServer(t)
	srv.set("lb.example", dns.TypeA, record{addrs: []netip.Addr{v4a, v4b}, ttl: 30})
	srv.set("lb.example", dns.TypeAAAA, record{addrs: []netip.Addr{v6a}, ttl: 10})
	for _, tc := range []struct {
		family config.Family
		want   []netip.Addr
		ttl    time.Duration
	}{
		{config.FamilyPreferIPv4, []netip.Addr{v4a, v4b, v6a}, 10 * time.Second},
		{config.FamilyPreferIPv6, []netip.Addr{v6a, v4a, v4b}, 10 * time.Second},
		{config.FamilyIPv4, []netip.Addr{v4a, v4b}, 30 * time.Second},
		{config.FamilyIPv6, []netip.Addr{v6a}, 10 * time.Second},
	} {
		c := testClient(t, tc.family, "", "", srv.addr)
		a, err := c.Lookup(context.Background(), "lb.example.")
		if err != nil {
			t.Fatalf("%s: %v", tc.family, err)
		}
		if !slices.Equal(a.Addrs, tc.want) || a.TTL != tc.ttl {
			t.Errorf("%s: got %v ttl %v, want %v ttl %v", tc.family, a.Addrs, a.TTL, tc.want, tc.ttl)
		}
	}
}

func TestLookupOneFamilyMissing(t *testing.T) {
	srv := newTestServer(t)
	srv.set("v4only.example", dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 30})
	a, err := testClient(t, config.FamilyPreferIPv6, "", "", srv.addr).Lookup(context.Background(), "v4only.example.")
	if err != nil || !slices.Equal(a.Addrs, []netip.Addr{v4a}) {
		t.Fatalf("prefer-ipv6 of an IPv4-only name: %v, %v", a.Addrs, err)
	}
	_, err = testClient(t, config.FamilyIPv6, "", "", srv.addr).Lookup(context.Background(), "v4only.example.")
	if !errors.Is(err, ErrNoData) || ResultOf(err) != ResultNoData {
		t.Fatalf("ipv6 of an IPv4-only name: err %v (result %s), want NODATA", err, ResultOf(err))
	}
}

func TestLookupFailures(t *testing.T) {
	srv := newTestServer(t)
	srv.set("broken.example", dns.TypeA, record{rcode: dns.RcodeServerFailure})
	srv.set("broken.example", dns.TypeAAAA, record{rcode: dns.RcodeServerFailure})
	srv.set("silent.example", dns.TypeA, record{drop: true})
	srv.set("silent.example", dns.TypeAAAA, record{drop: true})
	for _, tc := range []struct {
		name   string
		is     error
		result string
	}{
		{"broken.example.", ErrServer, ResultServer},
		{"silent.example.", ErrTimeout, ResultTimeout},
		{"missing.example.", ErrNXDomain, ResultNXDomain},
	} {
		_, err := testClient(t, config.FamilyPreferIPv4, "", "", srv.addr).Lookup(context.Background(), tc.name)
		if !errors.Is(err, tc.is) || ResultOf(err) != tc.result {
			t.Errorf("%s: err %v (result %s), want %v (%s)", tc.name, err, ResultOf(err), tc.is, tc.result)
		}
	}
}

// TestLookupNextServer: a server that fails or times out is followed by
// the next one.
func TestLookupNextServer(t *testing.T) {
	bad, good := newTestServer(t), newTestServer(t)
	bad.set("lb.example", dns.TypeA, record{drop: true})
	good.set("lb.example", dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 5})
	a, err := testClient(t, config.FamilyIPv4, "", "", bad.addr, good.addr).Lookup(context.Background(), "lb.example.")
	if err != nil || !slices.Equal(a.Addrs, []netip.Addr{v4a}) {
		t.Fatalf("got %v, %v; want %v from the second server", a.Addrs, err, v4a)
	}
}

// TestLookupTruncatedUsesTCP: an answer with the TC bit is asked again
// over TCP, whose answer counts.
func TestLookupTruncatedUsesTCP(t *testing.T) {
	srv := newTestServer(t)
	srv.set("big.example", dns.TypeA, record{addrs: []netip.Addr{v4b}, ttl: 7, big: true})
	a, err := testClient(t, config.FamilyIPv4, "", "", srv.addr).Lookup(context.Background(), "big.example.")
	if err != nil || !slices.Equal(a.Addrs, []netip.Addr{v4b}) || a.TTL != 7*time.Second {
		t.Fatalf("got %v ttl %v, %v; want %v ttl 7s", a.Addrs, a.TTL, err, v4b)
	}
	if u, c := srv.asked("big.example", dns.TypeA, "udp"), srv.asked("big.example", dns.TypeA, "tcp"); u != 1 || c != 1 {
		t.Fatalf("asked %d times over UDP and %d over TCP, want 1 and 1", u, c)
	}
}

// TestLookupSearchList: a short name goes through resolv.conf's search
// list under its ndots rule, as in a pod.
func TestLookupSearchList(t *testing.T) {
	srv := newTestServer(t)
	srv.set("relay.liqo.svc.cluster.local", dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 5})
	conf := "nameserver 192.0.2.53\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"
	c := testClient(t, config.FamilyIPv4, conf, "", srv.addr)
	a, err := c.Lookup(context.Background(), "relay.liqo")
	if err != nil || !slices.Equal(a.Addrs, []netip.Addr{v4a}) {
		t.Fatalf("got %v, %v; want %v", a.Addrs, err, v4a)
	}
	if n := srv.asked("relay.liqo.default.svc.cluster.local", dns.TypeA, "udp"); n != 1 {
		t.Errorf("the first search name was asked %d times, want 1", n)
	}
	if n := srv.asked("relay.liqo", dns.TypeA, "udp"); n != 0 {
		t.Errorf("the bare name was asked %d times before the search list ran out, want 0", n)
	}
}

// TestLookupHostsFirst: a name in the hosts file (a pod's hostAliases) is
// answered from there, without asking DNS.
func TestLookupHostsFirst(t *testing.T) {
	srv := newTestServer(t)
	srv.set("gw.example", dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 5})
	hosts := "# hostAliases\n127.0.0.1 localhost\n192.0.2.2\tgw.example gw # alias\n2001:db8::1 gw.example\n"
	a, err := testClient(t, config.FamilyPreferIPv6, "", hosts, srv.addr).Lookup(context.Background(), "GW.example.")
	if err != nil || !slices.Equal(a.Addrs, []netip.Addr{v6a, v4b}) {
		t.Fatalf("got %v, %v; want %v from the hosts file", a.Addrs, err, []netip.Addr{v6a, v4b})
	}
	if n := srv.asked("gw.example", dns.TypeA, "udp"); n != 0 {
		t.Fatalf("DNS was asked %d times for a name in the hosts file", n)
	}
}

func TestNoResolvers(t *testing.T) {
	c := NewClient(config.DefaultDNS(), WithResolvConf(filepath.Join(t.TempDir(), "none")), WithHosts(filepath.Join(t.TempDir(), "none")))
	if _, err := c.Lookup(context.Background(), "x.example"); err == nil {
		t.Fatal("lookup without any resolver succeeded")
	}
}
