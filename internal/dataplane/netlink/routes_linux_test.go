//go:build linux

package netlink_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"

	wgtun "golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/dataplane/netlink"
	"github.com/liqo-relay/relay/internal/dataplane/tun"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

const (
	rtTestLink  = "relay0"
	rtTestTable = 100
	rtTestPrio  = 1000
	rtTestMark  = 0xca6c
)

func rtTestOptions(t testing.TB) netlink.RouteOptions {
	var logger *slog.Logger
	if _, bench := t.(*testing.B); !bench {
		logger = slog.New(slog.NewTextHandler(rtTestWriter{t}, nil))
	}
	return netlink.RouteOptions{
		Link:      rtTestLink,
		Addresses: []netip.Prefix{netip.MustParsePrefix("100.64.0.1/32"), netip.MustParsePrefix("fd64::1/128")},
		MTU:       1400,
		Table:     rtTestTable,
		Priority:  rtTestPrio,
		FwMark:    rtTestMark,
		Logger:    logger,
	}
}

// rtTestWriter sends log lines to t.Log.
type rtTestWriter struct{ t testing.TB }

func (w rtTestWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// rtEnv is a namespace with a kernel TUN and a RouteManager on it.
type rtEnv struct {
	ns  *netns.NS
	dev wgtun.Device
	m   *netlink.RouteManager
}

func rtNewEnv(t testing.TB) *rtEnv {
	t.Helper()
	netns.RequireRoot(t)
	e := &rtEnv{ns: netns.New(t, "rt")}
	if err := e.ns.Do(func() (err error) {
		e.dev, err = tun.CreateKernel(rtTestLink, 1420)
		if err != nil {
			return err
		}
		e.m, err = netlink.NewRouteManager(rtTestOptions(t))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		e.dev.Close()
	})
	return e
}

// rules returns `ip rule` lines of a family ("-4" or "-6") that look up
// our table.
func (e *rtEnv) rules(t *testing.T, fam string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(e.ns.Run(t, "ip", fam, "rule", "show"), "\n") {
		if strings.Contains(l, fmt.Sprintf("lookup %d", rtTestTable)) {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return out
}

// routes returns the destinations in our table, both families, sorted.
func (e *rtEnv) routes(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, fam := range []string{"-4", "-6"} {
		list, err := e.ns.Output("ip", fam, "route", "show", "table", fmt.Sprint(rtTestTable))
		if err != nil {
			if strings.Contains(list, "does not exist") { // an empty table
				continue
			}
			t.Fatal(err)
		}
		for _, l := range strings.Split(list, "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				if !strings.Contains(l, "dev "+rtTestLink) {
					t.Errorf("route not on %s: %q", rtTestLink, l)
				}
				out = append(out, f[0])
			}
		}
	}
	slices.Sort(out)
	return out
}

func rtPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestRouteManagerInstallsRulesAndLink(t *testing.T) {
	e := rtNewEnv(t)
	want := fmt.Sprintf("%d: not from all fwmark %#x lookup %d", rtTestPrio, rtTestMark, rtTestTable)
	for _, fam := range []string{"-4", "-6"} {
		if got := e.rules(t, fam); !slices.Equal(got, []string{want}) {
			t.Errorf("ip %s rule: got %q, want [%q]", fam, got, want)
		}
	}
	link := e.ns.Run(t, "ip", "-o", "link", "show", "dev", rtTestLink)
	if !strings.Contains(link, "mtu 1400") || !strings.Contains(link, ",UP") {
		t.Errorf("link not up with mtu 1400: %s", link)
	}
	addrs := e.ns.Run(t, "ip", "-o", "addr", "show", "dev", rtTestLink)
	for _, a := range []string{"100.64.0.1/32", "fd64::1/128"} {
		if !strings.Contains(addrs, a) {
			t.Errorf("address %s missing: %s", a, addrs)
		}
	}
	for _, l := range strings.Split(addrs, "\n") {
		if strings.Contains(l, "fd64::1/128") && strings.Contains(l, "tentative") {
			t.Errorf("IPv6 address tentative (DAD not skipped): %s", l)
		}
	}
	if got := e.routes(t); len(got) != 0 {
		t.Errorf("table not empty before any peer: %q", got)
	}
}

func TestRouteManagerPeerLifecycle(t *testing.T) {
	e := rtNewEnv(t)
	type step struct {
		name    string
		do      func() error
		wantErr error // matched with errors.Is; nil means success
		routes  []string
	}
	a := rtPrefixes("10.1.0.0/16", "fd00:1::/64")
	steps := []step{
		{"a reachable", func() error { return e.m.SetPeer("a", a, true) }, nil,
			[]string{"10.1.0.0/16", "fd00:1::/64"}},
		{"a again (idempotent)", func() error { return e.m.SetPeer("a", a, true) }, nil,
			[]string{"10.1.0.0/16", "fd00:1::/64"}},
		{"a unreachable: withdrawn", func() error { return e.m.SetPeer("a", a, false) }, nil,
			nil},
		{"a unreachable again", func() error { return e.m.SetPeer("a", a, false) }, nil,
			nil},
		{"a back", func() error { return e.m.SetPeer("a", a, true) }, nil,
			[]string{"10.1.0.0/16", "fd00:1::/64"}},
		{"a prefixes change (unmasked input is masked)", func() error {
			return e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "10.2.3.4/24"), true)
		}, nil, []string{"10.1.0.0/16", "10.2.3.0/24"}},
		{"b reachable", func() error { return e.m.SetPeer("b", rtPrefixes("10.3.0.0/16"), true) }, nil,
			[]string{"10.1.0.0/16", "10.2.3.0/24", "10.3.0.0/16"}},
		{"b claims a's prefix", func() error { return e.m.SetPeer("b", rtPrefixes("10.1.0.0/16"), true) },
			netlink.ErrRoutePrefixConflict, []string{"10.1.0.0/16", "10.2.3.0/24", "10.3.0.0/16"}},
		{"unreachable b still claims its prefix", func() error {
			if err := e.m.SetPeer("b", rtPrefixes("10.3.0.0/16"), false); err != nil {
				return err
			}
			return e.m.SetPeer("a", rtPrefixes("10.3.0.0/16"), true)
		}, netlink.ErrRoutePrefixConflict, []string{"10.1.0.0/16", "10.2.3.0/24"}},
		{"remove a", func() error { return e.m.RemovePeer("a") }, nil, nil},
		{"remove a again", func() error { return e.m.RemovePeer("a") }, nil, nil},
		{"a's prefix is free after removal", func() error { return e.m.SetPeer("b", rtPrefixes("10.1.0.0/16"), true) }, nil,
			[]string{"10.1.0.0/16"}},
		{"remove unknown", func() error { return e.m.RemovePeer("nobody") }, nil, []string{"10.1.0.0/16"}},
	}
	for _, s := range steps {
		err := s.do()
		switch {
		case s.wantErr == nil && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.wantErr != nil && !errors.Is(err, s.wantErr):
			t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
		}
		if got := e.routes(t); !slices.Equal(got, s.routes) {
			t.Fatalf("%s: routes in table %d = %q, want %q", s.name, rtTestTable, got, s.routes)
		}
	}
}

func TestRouteManagerFwMarkBypassesTable(t *testing.T) {
	e := rtNewEnv(t)
	// The host's own route to the peer prefix: Liqo's consumer path, here a
	// veth in the main table.
	e.ns.Run(t, "ip", "link", "add", "consumer0", "type", "veth", "peer", "name", "consumer1")
	e.ns.Run(t, "ip", "link", "set", "consumer0", "up")
	e.ns.Run(t, "ip", "route", "add", "10.1.0.0/16", "dev", "consumer0")
	e.ns.Run(t, "ip", "-6", "route", "add", "fd00:1::/64", "dev", "consumer0")
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), true); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("%#x", rtTestMark)
	cases := []struct {
		name string
		args []string
		dev  string
	}{
		{"v4 unmarked uses our table", []string{"ip", "route", "get", "10.1.2.3"}, rtTestLink},
		{"v4 marked bypasses it", []string{"ip", "route", "get", "10.1.2.3", "mark", mark}, "consumer0"},
		{"v4 other mark uses it", []string{"ip", "route", "get", "10.1.2.3", "mark", "0x1"}, rtTestLink},
		{"v6 unmarked uses our table", []string{"ip", "-6", "route", "get", "fd00:1::5"}, rtTestLink},
		{"v6 marked bypasses it", []string{"ip", "-6", "route", "get", "fd00:1::5", "mark", mark}, "consumer0"},
	}
	check := func(when string) {
		t.Helper()
		for _, c := range cases {
			want := c.dev
			if when == "withdrawn" {
				want = "consumer0"
			}
			if out := e.ns.Run(t, c.args...); !strings.Contains(out, "dev "+want+" ") {
				t.Errorf("%s, %s: %s, want dev %s", when, c.name, strings.TrimSpace(out), want)
			}
		}
	}
	check("reachable")
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), false); err != nil {
		t.Fatal(err)
	}
	check("withdrawn")
}
