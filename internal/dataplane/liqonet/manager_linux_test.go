//go:build linux

package liqonet

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// liqoTable is a table ID like the ones Liqo generates (bit 8 set).
const liqoTable = 0x12345

// gatewayNS builds a namespace that looks like a Liqo gateway pod for the
// manager: the relay's link, Liqo's tunnel, one Geneve-like interface to node
// n1, and Liqo's per-node table selected by "iif liqo-tunnel" (added without
// priority, as Liqo does).
func gatewayNS(t *testing.T) *netns.NS {
	t.Helper()
	ns := netns.New(t, "lqnet")
	// The kernel may lack dummy devices: veth pairs with both ends here.
	for i, link := range []string{"relay0", "liqo-tunnel", "liqo.n1"} {
		peer := fmt.Sprintf("peer%d", i)
		ns.Run(t, "ip", "link", "add", link, "type", "veth", "peer", "name", peer)
		ns.Run(t, "ip", "link", "set", link, "up")
		ns.Run(t, "ip", "link", "set", peer, "up")
	}
	tbl := strconv.Itoa(liqoTable)
	ns.Run(t, "ip", "route", "add", "10.80.1.1/32", "dev", "liqo.n1", "scope", "link", "table", tbl)
	ns.Run(t, "ip", "route", "add", "10.244.1.5/32", "via", "10.80.1.1", "dev", "liqo.n1", "table", tbl)
	ns.Run(t, "ip", "rule", "add", "iif", "liqo-tunnel", "lookup", tbl)
	return ns
}

func newManager(t *testing.T, ns *netns.NS, mod func(*Options)) *Manager {
	t.Helper()
	o := testOptions()
	if mod != nil {
		mod(&o)
	}
	var m *Manager
	if err := ns.Do(func() (err error) { m, err = New(o); return err }); err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// rulePrios returns the priority of each rule line of `ip rule` that
// contains one of the words, by word.
func rulePrios(t *testing.T, ns *netns.NS) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(ns.Run(t, "ip", "rule", "show"), "\n") {
		prio, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		p, _ := strconv.Atoi(prio)
		for _, w := range []string{"lookup 20001", "lookup 20002", "fwmark 0x40000000/0x40000000", "lookup 5000", "lookup 74565"} {
			if strings.Contains(rest, w) {
				out[w] = p
			}
		}
	}
	return out
}

// waitUntil polls cond with a generous deadline: the watcher reacts to
// kernel notifications, whose delivery time the test does not assert.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond) // real: polls the kernel's rules and nft tables
	}
}

func TestManagerInstallsCopiesAndRemoves(t *testing.T) {
	ns := gatewayNS(t)
	m := newManager(t, ns, func(o *Options) {
		o.Consumer = Consumer{CIDR: netip.MustParsePrefix("10.70.0.0/16"), Via: netip.MustParseAddr("169.254.18.1")}
	})
	if out := ns.Run(t, "nft", "list", "table", "ip", "liqo-relay"); !strings.Contains(out, "dnat to ip daddr") {
		t.Fatalf("nft table lacks the pinning rule:\n%s", out)
	}
	rules := ns.Run(t, "ip", "rule", "show")
	for _, want := range []string{
		"1000:\tfrom all fwmark 0x40000000/0x40000000 lookup 1900",
		"1001:\tfrom all iif relay0 lookup 20001",
		"1002:\tfrom all to 10.70.0.0/16 iif lo ipproto udp sport 51900 lookup 20002",
	} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules lack %q:\n%s", want, rules)
		}
	}
	in := ns.Run(t, "ip", "route", "show", "table", "20001")
	for _, want := range []string{"10.80.1.1 dev liqo.n1 proto static scope link", "10.244.1.5 via 10.80.1.1 dev liqo.n1"} {
		if !strings.Contains(in, want) {
			t.Errorf("copied table lacks %q:\n%s", want, in)
		}
	}
	if out := ns.Run(t, "ip", "route", "show", "table", "20002"); !strings.Contains(out, "10.70.0.0/16 via 169.254.18.1 dev liqo-tunnel") {
		t.Errorf("consumer table:\n%s", out)
	}

	// A pod appears on the node: Liqo adds its route; the copy follows.
	ns.Run(t, "ip", "route", "add", "10.244.1.9/32", "via", "10.80.1.1", "dev", "liqo.n1", "table", strconv.Itoa(liqoTable))
	waitUntil(t, "the new pod route is copied", func() bool {
		return strings.Contains(ns.Run(t, "ip", "route", "show", "table", "20001"), "10.244.1.9 via 10.80.1.1")
	})
	// And goes.
	ns.Run(t, "ip", "route", "del", "10.244.1.5/32", "table", strconv.Itoa(liqoTable))
	waitUntil(t, "the deleted pod route leaves the copy", func() bool {
		return !strings.Contains(ns.Run(t, "ip", "route", "show", "table", "20001"), "10.244.1.5 ")
	})

	// Idempotent: a second Ensure changes nothing.
	if repaired, err := m.Ensure(); err != nil || repaired {
		t.Errorf("Ensure on a settled state = %v, %v; want false, nil", repaired, err)
	}
	// Someone deletes the nft table: Ensure restores it.
	ns.Run(t, "nft", "delete", "table", "ip", "liqo-relay")
	if repaired, err := m.Ensure(); err != nil || !repaired {
		t.Errorf("Ensure after the table was deleted = %v, %v; want true, nil", repaired, err)
	}

	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if out, err := ns.Output("nft", "list", "table", "ip", "liqo-relay"); err == nil {
		t.Errorf("nft table left after Close:\n%s", out)
	}
	if p := rulePrios(t, ns); len(p) != 1 { // only Liqo's own rule (table 74565)
		t.Errorf("rules left after Close: %v", p)
	}
	for _, tbl := range []string{"20001", "20002"} {
		if out := ns.Run(t, "ip", "route", "show", "table", tbl); strings.TrimSpace(out) != "" {
			t.Errorf("table %s left after Close:\n%s", tbl, out)
		}
	}
}

// TestManagerStaysAheadOfLiqoRules adds rules without a priority after the
// manager started, as Liqo does: the kernel numbers each just above the first
// rule after "local", ahead of ours. Ours must end up ahead again.
func TestManagerStaysAheadOfLiqoRules(t *testing.T) {
	ns := gatewayNS(t)
	m := newManager(t, ns, nil)
	for i := range 3 {
		ns.Run(t, "ip", "rule", "add", "iif", "liqo.n1", "to", fmt.Sprintf("10.9%d.0.0/16", i), "lookup", "5000")
		waitUntil(t, "our rules are ahead of every foreign rule", func() bool {
			p := rulePrios(t, ns)
			return p["fwmark 0x40000000/0x40000000"] < p["lookup 5000"] && p["lookup 20001"] < p["lookup 5000"] &&
				p["lookup 20001"] < p["lookup 74565"]
		})
	}
	if s := m.Stats(); s.Reasserts < 3 {
		t.Errorf("Stats.Reasserts = %d after three foreign rules landed ahead, want >= 3", s.Reasserts)
	}
	// Exactly one of each rule of ours.
	out := ns.Run(t, "ip", "rule", "show")
	if n := strings.Count(out, "lookup 20001"); n != 1 {
		t.Errorf("%d rules for table 20001, want 1:\n%s", n, out)
	}
}

// TestManagerResetsPinnedConnections: withdrawing a peer deletes its pinned
// connections from conntrack (and only those) and counts them.
func TestManagerResetsPinnedConnections(t *testing.T) {
	ns := gatewayNS(t)
	m := newManager(t, ns, nil)
	peer := []netip.Prefix{netip.MustParsePrefix("10.92.0.12/32")}
	if err := m.SetPeer("b", peer, true); err != nil {
		t.Fatal(err)
	}
	if got, ok := m.Stats().Resets["b"]; !ok || got != 0 {
		t.Errorf("Resets[b] = %d, %v before any withdrawal; want 0, present", got, ok)
	}
	flows := []struct {
		src, dst string
		mark     uint32
	}{
		{"10.244.1.5", "10.92.0.12", 0x40000000}, // opened here, pinned
		{"10.92.0.12", "10.244.1.5", 0x40000000}, // opened by the peer, from the TUN
		{"10.244.1.6", "10.92.0.12", 0},          // Liqo's path: not pinned
		{"10.244.1.5", "10.92.0.13", 0x40000000}, // pinned to another peer
	}
	if err := ns.Do(func() error {
		h, err := netlink.NewHandle(unix.NETLINK_NETFILTER)
		if err != nil {
			return err
		}
		defer h.Close()
		for i, f := range flows {
			fl := &netlink.ConntrackFlow{
				FamilyType: unix.AF_INET,
				Forward:    netlink.IPTuple{SrcIP: net.ParseIP(f.src).To4(), DstIP: net.ParseIP(f.dst).To4(), Protocol: unix.IPPROTO_UDP, SrcPort: uint16(40000 + i), DstPort: 80},
				Reverse:    netlink.IPTuple{SrcIP: net.ParseIP(f.dst).To4(), DstIP: net.ParseIP(f.src).To4(), Protocol: unix.IPPROTO_UDP, SrcPort: 80, DstPort: uint16(40000 + i)},
				Mark:       f.mark,
				TimeOut:    300,
			}
			if err := h.ConntrackCreate(netlink.ConntrackTable, unix.AF_INET, fl); err != nil {
				return fmt.Errorf("create flow %d: %w", i, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPeer("b", peer, false); err != nil {
		t.Fatal(err)
	}
	if got := m.Stats().Resets["b"]; got != 2 {
		t.Errorf("Resets[b] = %d, want 2", got)
	}
	var left int
	if err := ns.Do(func() error {
		fl, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
		left = len(fl)
		for _, f := range fl {
			t.Logf("left: %s mark %#x", f, f.Mark)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if left != 2 {
		t.Errorf("%d conntrack entries left, want the 2 not pinned to b", left)
	}
	// The peer's prefixes left the pinning set.
	if out := ns.Run(t, "nft", "list", "set", "ip", "liqo-relay", "peers_b"); strings.Contains(out, "10.92.0.12") {
		t.Errorf("withdrawn peer still pinned:\n%s", out)
	}
}

// A consumer route left by an earlier run goes when the new run has none.
func TestManagerRemovesStaleConsumerRoute(t *testing.T) {
	ns := gatewayNS(t)
	ns.Run(t, "ip", "route", "add", "10.70.0.0/16", "dev", "liqo-tunnel", "table", "20002")
	newManager(t, ns, nil)
	if out := ns.Run(t, "ip", "route", "show", "table", "20002"); strings.TrimSpace(out) != "" {
		t.Errorf("stale consumer route kept:\n%s", out)
	}
}
