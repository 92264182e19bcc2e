//go:build linux

package tun_test

import (
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"

	wgtun "golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/netns"
	"github.com/liqo-relay/relay/pkg/tun"
)

const (
	rtTestLink  = "relay0"
	rtTestTable = 100
	rtTestPrio  = 1000
	rtTestMark  = 0xca6c
)

func rtTestOptions(t *testing.T) tun.RouteOptions {
	return tun.RouteOptions{
		Link:      rtTestLink,
		Addresses: []netip.Prefix{netip.MustParsePrefix("100.64.0.1/32"), netip.MustParsePrefix("fd64::1/128")},
		MTU:       1400,
		Table:     rtTestTable,
		Priority:  rtTestPrio,
		FwMark:    rtTestMark,
		Logger:    slog.New(slog.NewTextHandler(rtTestWriter{t}, nil)),
	}
}

// rtTestWriter sends log lines to t.Log.
type rtTestWriter struct{ t *testing.T }

func (w rtTestWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// rtEnv is a namespace with a kernel TUN and a RouteManager on it.
type rtEnv struct {
	ns  *netns.NS
	dev wgtun.Device
	m   *tun.RouteManager
}

func rtNewEnv(t *testing.T) *rtEnv {
	t.Helper()
	netns.RequireRoot(t)
	e := &rtEnv{ns: netns.New(t, "rt")}
	if err := e.ns.Do(func() (err error) {
		e.dev, err = tun.CreateKernel(rtTestLink, 1420)
		if err != nil {
			return err
		}
		e.m, err = tun.NewRouteManager(rtTestOptions(t))
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
	if strings.Contains(addrs, "tentative") {
		t.Errorf("IPv6 address tentative (DAD not skipped): %s", addrs)
	}
	if got := e.routes(t); len(got) != 0 {
		t.Errorf("table not empty before any peer: %q", got)
	}
}
