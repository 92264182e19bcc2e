//go:build linux

package netlink_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/dataplane/netlink"
	"github.com/liqo-relay/relay/internal/dataplane/tun"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// rtEnsure calls EnsureRules and checks whether it reported a repair.
func (e *rtEnv) ensure(t *testing.T, wantRepaired bool) {
	t.Helper()
	repaired, err := e.m.EnsureRules()
	if err != nil {
		t.Fatalf("EnsureRules: %v", err)
	}
	if repaired != wantRepaired {
		t.Fatalf("EnsureRules repaired = %v, want %v", repaired, wantRepaired)
	}
}

func rtOurRule(prio int) string {
	return fmt.Sprintf("%d: not from all fwmark %#x lookup %d", prio, rtTestMark, rtTestTable)
}

// rtAddConsumer adds a veth standing for Liqo's consumer path.
func (e *rtEnv) addConsumer(t *testing.T) {
	t.Helper()
	e.ns.Run(t, "ip", "link", "add", "consumer0", "type", "veth", "peer", "name", "consumer1")
	e.ns.Run(t, "ip", "link", "set", "consumer0", "up")
}

// routeDev returns the device `ip route get` picks for dst.
func (e *rtEnv) routeDev(t *testing.T, dst string) string {
	t.Helper()
	f := strings.Fields(e.ns.Run(t, "ip", "route", "get", dst))
	if i := slices.Index(f, "dev"); i >= 0 && i+1 < len(f) {
		return f[i+1]
	}
	t.Fatalf("no dev in route to %s: %q", dst, f)
	return ""
}

func TestEnsureRulesNothingToDo(t *testing.T) {
	e := rtNewEnv(t)
	e.ensure(t, false)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); err != nil {
		t.Fatal(err)
	}
	e.ensure(t, false)
}

func TestEnsureRulesRepairsDeletedAndDuplicateRules(t *testing.T) {
	e := rtNewEnv(t)
	e.ns.Run(t, "ip", "-4", "rule", "del", "priority", fmt.Sprint(rtTestPrio))
	e.ns.Run(t, "ip", "-6", "rule", "del", "priority", fmt.Sprint(rtTestPrio))
	if got := e.rules(t, "-4"); len(got) != 0 {
		t.Fatalf("rule not deleted by the test: %q", got)
	}
	e.ensure(t, true)
	for _, fam := range []string{"-4", "-6"} {
		if got := e.rules(t, fam); !slices.Equal(got, []string{rtOurRule(rtTestPrio)}) {
			t.Errorf("ip %s rule after repair: %q", fam, got)
		}
	}
	e.ensure(t, false)

	// A duplicate of ours further down (e.g. a crash in the middle of a move).
	e.ns.Run(t, "ip", "rule", "add", "not", "fwmark", fmt.Sprintf("%#x", rtTestMark), "lookup", fmt.Sprint(rtTestTable), "priority", "1500")
	e.ensure(t, true)
	if got := e.rules(t, "-4"); !slices.Equal(got, []string{rtOurRule(rtTestPrio)}) {
		t.Errorf("duplicate not removed: %q", got)
	}
}

func TestEnsureRulesRepairsRoutes(t *testing.T) {
	e := rtNewEnv(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), true); err != nil {
		t.Fatal(err)
	}
	if err := e.m.SetPeer("b", rtPrefixes("10.2.0.0/16"), false); err != nil {
		t.Fatal(err)
	}
	table := fmt.Sprint(rtTestTable)
	e.ns.Run(t, "ip", "route", "del", "10.1.0.0/16", "table", table)
	e.ns.Run(t, "ip", "-6", "route", "del", "fd00:1::/64", "table", table)
	e.ns.Run(t, "ip", "route", "add", "10.2.0.0/16", "dev", rtTestLink, "table", table) // withdrawn peer
	e.ns.Run(t, "ip", "route", "add", "10.9.0.0/16", "dev", rtTestLink, "table", table) // nobody's
	e.ensure(t, true)
	if got, want := e.routes(t), []string{"10.1.0.0/16", "fd00:1::/64"}; !slices.Equal(got, want) {
		t.Errorf("routes after repair = %q, want %q", got, want)
	}
	e.ensure(t, false)
}

func TestEnsureRulesMovesAheadOfShadowingRule(t *testing.T) {
	e := rtNewEnv(t)
	e.addConsumer(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); err != nil {
		t.Fatal(err)
	}
	// Foreign table 200 routes all of 10/8 to the consumer; table 201 only
	// unrelated space.
	e.ns.Run(t, "ip", "route", "add", "10.0.0.0/8", "dev", "consumer0", "table", "200")
	e.ns.Run(t, "ip", "route", "add", "192.168.0.0/16", "dev", "consumer0", "table", "201")

	steps := []struct {
		name     string
		foreign  []string // ip rule add arguments
		repaired bool
		ours     int // our priority afterwards
		dev      string
	}{
		{"unrelated table ahead", []string{"priority", "500", "lookup", "201"}, false, rtTestPrio, rtTestLink},
		{"selective rule ahead (source)", []string{"priority", "510", "from", "192.0.2.1", "lookup", "200"}, false, rtTestPrio, rtTestLink},
		{"selective rule ahead (mark)", []string{"priority", "520", "fwmark", "0x1", "lookup", "200"}, false, rtTestPrio, rtTestLink},
		{"destination elsewhere", []string{"priority", "530", "to", "10.200.0.0/16", "lookup", "200"}, false, rtTestPrio, rtTestLink},
		{"same priority, after ours", []string{"priority", fmt.Sprint(rtTestPrio), "lookup", "200"}, false, rtTestPrio, rtTestLink},
		{"catch-all ahead", []string{"priority", "900", "lookup", "200"}, true, 899, rtTestLink},
		{"destination selector overlapping ours", []string{"priority", "800", "to", "10.1.7.0/24", "lookup", "200"}, true, 799, rtTestLink},
	}
	for _, s := range steps {
		e.ns.Run(t, append([]string{"ip", "rule", "add"}, s.foreign...)...)
		e.ensure(t, s.repaired)
		// Ours is the only rule with both "not" and our table.
		var ours []string
		for _, l := range e.rules(t, "-4") {
			if strings.Contains(l, "not from all") {
				ours = append(ours, l)
			}
		}
		if !slices.Equal(ours, []string{rtOurRule(s.ours)}) {
			t.Fatalf("%s: our rules = %q, want [%q]", s.name, ours, rtOurRule(s.ours))
		}
		if dev := e.routeDev(t, "10.1.7.7"); dev != s.dev {
			t.Fatalf("%s: 10.1.7.7 routed via %s, want %s", s.name, dev, s.dev)
		}
	}
	// Foreign rules are all still there.
	rules := e.ns.Run(t, "ip", "rule", "show")
	for _, want := range []string{"500:", "510:", "520:", "530:", "800:", "900:", fmt.Sprintf("%d:\tfrom all lookup 200", rtTestPrio)} {
		if !strings.Contains(rules, want) {
			t.Errorf("foreign rule %q deleted:\n%s", want, rules)
		}
	}
	e.ensure(t, false)

	// Deleting ours now re-adds it at its current priority, 799.
	e.ns.Run(t, "ip", "rule", "del", "priority", "799")
	e.ensure(t, true)
	if got := e.rules(t, "-4"); !slices.Contains(got, rtOurRule(799)) {
		t.Errorf("rule not re-added at its moved priority: %q", got)
	}
}

func TestEnsureRulesShadowedWithoutRoom(t *testing.T) {
	e := rtNewEnv(t)
	e.addConsumer(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); err != nil {
		t.Fatal(err)
	}
	e.ns.Run(t, "ip", "route", "add", "default", "dev", "consumer0", "table", "200")
	e.ns.Run(t, "ip", "rule", "add", "priority", "1", "lookup", "200")
	repaired, err := e.m.EnsureRules()
	if !errors.Is(err, netlink.ErrRuleShadowed) {
		t.Fatalf("EnsureRules = %v, want ErrRuleShadowed", err)
	}
	if repaired {
		t.Error("EnsureRules reported a repair although nothing could be moved")
	}
	if got := e.rules(t, "-4"); !slices.Contains(got, rtOurRule(rtTestPrio)) {
		t.Errorf("our rule lost while failing to move: %q", got)
	}
}

func TestRouteManagerCloseRemovesEverything(t *testing.T) {
	e := rtNewEnv(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), true); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, fam := range []string{"-4", "-6"} {
		if got := e.rules(t, fam); len(got) != 0 {
			t.Errorf("ip %s rules left after Close: %q", fam, got)
		}
	}
	if got := e.routes(t); len(got) != 0 {
		t.Errorf("routes left after Close: %q", got)
	}
	if err := e.m.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); !errors.Is(err, netlink.ErrRoutesClosed) {
		t.Errorf("SetPeer after Close = %v", err)
	}
	if _, err := e.m.EnsureRules(); !errors.Is(err, netlink.ErrRoutesClosed) {
		t.Errorf("EnsureRules after Close = %v", err)
	}
	if err := e.m.RemovePeer("a"); !errors.Is(err, netlink.ErrRoutesClosed) {
		t.Errorf("RemovePeer after Close = %v", err)
	}
}

func TestCleanupStale(t *testing.T) {
	netns.RequireRoot(t)
	ns := netns.New(t, "stale")
	e := &rtEnv{ns: ns}
	mark, table := fmt.Sprintf("%#x", rtTestMark), fmt.Sprint(rtTestTable)
	// What a crashed relay leaves: a (here persistent) TUN, its rules, one
	// of them moved ahead, one from a run with another mark, routes.
	ns.Run(t, "ip", "tuntap", "add", "mode", "tun", "name", rtTestLink)
	ns.Run(t, "ip", "link", "set", rtTestLink, "up")
	ns.Run(t, "ip", "rule", "add", "not", "fwmark", mark, "lookup", table, "priority", fmt.Sprint(rtTestPrio))
	ns.Run(t, "ip", "-6", "rule", "add", "not", "fwmark", mark, "lookup", table, "priority", fmt.Sprint(rtTestPrio))
	ns.Run(t, "ip", "rule", "add", "not", "fwmark", mark, "lookup", table, "priority", "990")
	ns.Run(t, "ip", "rule", "add", "not", "fwmark", "0x99", "lookup", table, "priority", fmt.Sprint(rtTestPrio))
	ns.Run(t, "ip", "route", "add", "10.1.0.0/16", "dev", rtTestLink, "table", table)
	ns.Run(t, "ip", "-6", "route", "add", "fd00:1::/64", "dev", rtTestLink, "table", table)
	ns.Run(t, "ip", "route", "add", "10.1.0.0/16", "dev", "lo", "table", "300") // someone else's
	ns.Run(t, "ip", "rule", "add", "priority", fmt.Sprint(rtTestPrio), "lookup", "300")
	ns.Run(t, "ip", "rule", "add", "fwmark", mark, "lookup", "300", "priority", "990")

	opts := rtTestOptions(t)
	if err := ns.Do(func() error { return netlink.CleanupStale(opts) }); err != nil {
		t.Fatalf("CleanupStale: %v", err)
	}
	if _, err := ns.Output("ip", "link", "show", rtTestLink); err == nil {
		t.Error("stale TUN link not deleted")
	}
	for _, fam := range []string{"-4", "-6"} {
		if got := e.rules(t, fam); len(got) != 0 {
			t.Errorf("ip %s rules of ours left: %q", fam, got)
		}
	}
	if got := e.routes(t); len(got) != 0 {
		t.Errorf("table %d not flushed: %q", rtTestTable, got)
	}
	rules := ns.Run(t, "ip", "rule", "show")
	if !strings.Contains(rules, "lookup 300") || strings.Count(rules, "lookup 300") != 2 {
		t.Errorf("foreign rules touched:\n%s", rules)
	}
	if out := ns.Run(t, "ip", "route", "show", "table", "300"); !strings.Contains(out, "10.1.0.0/16") {
		t.Errorf("foreign table flushed: %q", out)
	}
	// Idempotent, and a fresh start works.
	if err := ns.Do(func() error { return netlink.CleanupStale(opts) }); err != nil {
		t.Fatalf("second CleanupStale: %v", err)
	}
	if err := ns.Do(func() error {
		dev, err := tun.CreateKernel(rtTestLink, 1420)
		if err != nil {
			return err
		}
		defer dev.Close()
		m, err := netlink.NewRouteManager(opts)
		if err != nil {
			return err
		}
		return m.Close()
	}); err != nil {
		t.Fatalf("start after cleanup: %v", err)
	}
}

func TestCleanupStaleLeavesForeignLink(t *testing.T) {
	netns.RequireRoot(t)
	ns := netns.New(t, "stale")
	ns.Run(t, "ip", "link", "add", rtTestLink, "type", "veth", "peer", "name", "other0")
	err := ns.Do(func() error { return netlink.CleanupStale(rtTestOptions(t)) })
	if !errors.Is(err, netlink.ErrStaleLinkNotTUN) {
		t.Fatalf("CleanupStale = %v, want ErrStaleLinkNotTUN", err)
	}
	ns.Run(t, "ip", "link", "show", rtTestLink) // still there
}

func TestEnsureRulesRepairsLinkDown(t *testing.T) {
	e := rtNewEnv(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), true); err != nil {
		t.Fatal(err)
	}
	e.ns.Run(t, "ip", "link", "set", rtTestLink, "down")
	e.ns.Run(t, "ip", "addr", "del", "100.64.0.1/32", "dev", rtTestLink)
	if got := e.routes(t); len(got) != 0 {
		t.Logf("routes kept by the kernel while down: %q", got)
	}
	e.ensure(t, true)
	if got, want := e.routes(t), []string{"10.1.0.0/16", "fd00:1::/64"}; !slices.Equal(got, want) {
		t.Errorf("routes after repair = %q, want %q", got, want)
	}
	link := e.ns.Run(t, "ip", "-o", "addr", "show", "dev", rtTestLink)
	if !strings.Contains(link, "100.64.0.1/32") {
		t.Errorf("address not restored: %s", link)
	}
	if dev := e.routeDev(t, "10.1.2.3"); dev != rtTestLink {
		t.Errorf("10.1.2.3 via %s after repair", dev)
	}
	e.ensure(t, false)
}

// TestEnsureRulesReaddedBehindSamePriority: a foreign catch-all rule added
// at our own priority sits after ours (the kernel appends within a
// priority), so it does not shadow; but once ours is deleted and re-added it
// lands after the foreign one, and EnsureRules must notice and move ahead.
func TestEnsureRulesReaddedBehindSamePriority(t *testing.T) {
	e := rtNewEnv(t)
	e.addConsumer(t)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); err != nil {
		t.Fatal(err)
	}
	e.ns.Run(t, "ip", "route", "add", "10.1.0.0/16", "dev", "consumer0", "table", "200")
	e.ns.Run(t, "ip", "rule", "add", "priority", fmt.Sprint(rtTestPrio), "lookup", "200")
	e.ensure(t, false)
	e.ns.Run(t, "ip", "rule", "del", "priority", fmt.Sprint(rtTestPrio), "not", "fwmark", fmt.Sprintf("%#x", rtTestMark))
	e.ensure(t, true)
	if got := e.rules(t, "-4"); !slices.Equal(got, []string{rtOurRule(rtTestPrio - 1)}) {
		t.Errorf("our rule = %q, want it re-added and moved to %d", got, rtTestPrio-1)
	}
	if dev := e.routeDev(t, "10.1.2.3"); dev != rtTestLink {
		t.Errorf("10.1.2.3 via %s, want %s", dev, rtTestLink)
	}
}
