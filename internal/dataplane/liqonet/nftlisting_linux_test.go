//go:build linux

package liqonet

import (
	"os/exec"
	"strings"
	"testing"
)

// TestManagerTableAsNftListsIt: the table programmed over netlink reads back
// with nft (the operators' view, docs/config.md) as the relay's table: the
// same text nft itself makes of the script the relay used to load with
// nft -f, sets merged as auto-merge would. Every peer has its own two sets
// and pin rule, in name order; an unreachable peer's prefix set is empty.
func TestManagerTableAsNftListsIt(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nft (Debian nftables) to read the table back")
	}
	ns := gatewayNS(t)
	m := newManager(t, ns, nil)
	for _, step := range []error{
		m.SetMapped("b", mustPrefixes("10.244.1.5/32", "10.244.1.0/25")),
		m.SetMapped("c", mustPrefixes("10.244.1.128/25", "10.244.2.7/32")),
		m.SetPeer("b", mustPrefixes("10.92.0.12/32"), true),
		m.SetPeer("c", mustPrefixes("10.92.0.13/32", "10.93.0.0/16"), true),
		m.SetPeer("d", mustPrefixes("10.95.0.1/32"), false),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	got := ns.Run(t, "nft", "list", "table", "ip", "liqo-relay")
	want := `table ip liqo-relay {
	set mapped_b {
		type ipv4_addr
		flags interval
		auto-merge
		elements = { 10.244.1.0/25 }
	}

	set peers_b {
		type ipv4_addr
		flags interval
		auto-merge
		elements = { 10.92.0.12 }
	}

	set mapped_c {
		type ipv4_addr
		flags interval
		auto-merge
		elements = { 10.244.1.128/25, 10.244.2.7 }
	}

	set peers_c {
		type ipv4_addr
		flags interval
		auto-merge
		elements = { 10.92.0.13, 10.93.0.0/16 }
	}

	set mapped_d {
		type ipv4_addr
		flags interval
		auto-merge
	}

	set peers_d {
		type ipv4_addr
		flags interval
		auto-merge
	}

	chain restore {
		type filter hook prerouting priority mangle; policy accept;
		ct mark & 0x40000000 == 0x40000000 meta mark set meta mark | 0x40000000
	}

	chain pin {
		type nat hook prerouting priority dstnat - 1; policy accept;
		iifname != "liqo-tunnel" iifname != "relay0" ip saddr @mapped_b ip daddr @peers_b ct mark set ct mark | 0x40000000 meta mark set meta mark | 0x40000000 dnat to ip daddr
		iifname != "liqo-tunnel" iifname != "relay0" ip saddr @mapped_c ip daddr @peers_c ct mark set ct mark | 0x40000000 meta mark set meta mark | 0x40000000 dnat to ip daddr
		iifname != "liqo-tunnel" iifname != "relay0" ip saddr @mapped_d ip daddr @peers_d ct mark set ct mark | 0x40000000 meta mark set meta mark | 0x40000000 dnat to ip daddr
		iifname "relay0" ct mark set ct mark | 0x40000000 dnat to ip daddr
	}
}`
	if fields(got) != fields(want) {
		t.Errorf("nft list table ip liqo-relay:\n%s\nwant:\n%s", got, want)
	}
}

// fields normalises white space (nft wraps long element lists).
func fields(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestNftSetEdgesListed: interval sets that touch either end of the
// address space read back with nft as the prefixes written.
func TestNftSetEdgesListed(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nft (Debian nftables) to read the table back")
	}
	ns := gatewayNS(t)
	var n *nftTable
	if err := ns.Do(func() (err error) { n, err = openNft("liqo-relay"); return err }); err != nil {
		t.Fatal(err)
	}
	defer n.close()
	t.Cleanup(func() { _ = n.remove() })
	for _, c := range []struct {
		peers []string
		want  string
	}{
		{[]string{"0.0.0.0/32", "10.0.0.0/8"}, "elements = { 0.0.0.0, 10.0.0.0/8 }"},
		{[]string{"255.255.255.0/24", "1.2.3.4/32"}, "elements = { 1.2.3.4, 255.255.255.0/24 }"},
		{[]string{"0.0.0.0/0"}, "elements = { 0.0.0.0/0 }"},
		{nil, ""},
	} {
		if err := n.replace(testOptions(), []pin{{peer: "b", prefixes: mustPrefixes(c.peers...)}}); err != nil {
			t.Fatalf("%v: %v", c.peers, err)
		}
		out := ns.Run(t, "nft", "list", "set", "ip", "liqo-relay", "peers_b")
		if c.want == "" && strings.Contains(out, "elements") || !strings.Contains(fields(out), c.want) {
			t.Errorf("%v listed as:\n%s\nwant %q", c.peers, out, c.want)
		}
	}
}
