package liqonet

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestRanges(t *testing.T) {
	cases := []struct {
		name string
		in   []netip.Prefix
		want string
	}{
		{"empty", nil, ""},
		{"one host, duplicated, IPv6 dropped", mustPrefixes("10.92.0.12/32", "10.92.0.12/32", "fd00::1/128"), "10.92.0.12-10.92.0.12"},
		{"unmasked", mustPrefixes("10.92.0.12/24"), "10.92.0.0-10.92.0.255"},
		{"nested", mustPrefixes("10.1.0.0/16", "10.0.0.0/8"), "10.0.0.0-10.255.255.255"},
		{"adjacent", mustPrefixes("10.0.0.0/8", "11.0.0.0/8", "192.168.1.1/32"), "10.0.0.0-11.255.255.255 192.168.1.1-192.168.1.1"},
		{"apart", mustPrefixes("10.0.0.1/32", "10.0.0.3/32"), "10.0.0.1-10.0.0.1 10.0.0.3-10.0.0.3"},
		{"top", mustPrefixes("255.255.255.0/24", "255.255.255.255/32", "0.0.0.0/32"), "0.0.0.0-0.0.0.0 255.255.255.0-255.255.255.255"},
		{"all", mustPrefixes("0.0.0.0/0", "10.0.0.0/8"), "0.0.0.0-255.255.255.255"},
	}
	for _, c := range cases {
		var got []string
		for _, r := range ranges(c.in) {
			got = append(got, r.first.String()+"-"+r.last.String())
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%s: ranges = %q, want %q", c.name, s, c.want)
		}
	}
}

// TestRangesMatchPrefixes checks ranges against the naive reference (an
// address is in the set when a prefix contains it) on random prefixes and
// probes, and that the ranges are sorted, disjoint and not adjacent.
func TestRangesMatchPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	addr := func() netip.Addr {
		// A small space (10.0.0.0/22 and the ends), so prefixes collide.
		switch rng.IntN(10) {
		case 0:
			return netip.AddrFrom4([4]byte{255, 255, 255, byte(rng.IntN(256))})
		case 1:
			return netip.AddrFrom4([4]byte{0, 0, 0, byte(rng.IntN(256))})
		}
		return netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(4)), byte(rng.IntN(256))})
	}
	for round := range 300 {
		var ps []netip.Prefix
		for range rng.IntN(8) {
			ps = append(ps, netip.PrefixFrom(addr(), 22+rng.IntN(11)))
		}
		rs := ranges(ps)
		for i := 1; i < len(rs); i++ {
			if rs[i-1].last.Next().Compare(rs[i].first) >= 0 {
				t.Fatalf("round %d: ranges %v overlap or touch (prefixes %v)", round, rs, ps)
			}
		}
		for range 200 {
			a := addr()
			want := slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
			got := slices.ContainsFunc(rs, func(r addrRange) bool { return r.first.Compare(a) <= 0 && a.Compare(r.last) <= 0 })
			if got != want {
				t.Fatalf("round %d: %s in ranges %v = %v, in prefixes %v = %v", round, a, rs, got, ps, want)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := testOptions().Validate(); err != nil {
		t.Fatalf("valid options refused: %v", err)
	}
	cases := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"liqo table bit", func(o *Options) { o.InTable = 0x1100 }, "inTable: 4352 has bit 8"},
		{"same table", func(o *Options) { o.ConsumerTable = o.InTable }, "consumerTable: 20001 is also inTable"},
		{"mark two bits", func(o *Options) { o.Mark = 3 }, "mark: 0x3 must be a single bit"},
		{"mark overlaps", func(o *Options) { o.SocketMark = o.Mark | 1 }, "overlaps the sockets' mark"},
		{"priority", func(o *Options) { o.Priority = 32765 }, "priority: 32765 outside"},
		{"tunnel is link", func(o *Options) { o.Tunnel = o.Link }, "is the relay's own link"},
		{"nft name", func(o *Options) { o.NftTable = "a b" }, "nftTable"},
		{"consumer v6", func(o *Options) { o.Consumer.CIDR = netip.MustParsePrefix("fd00::/64") }, "consumer.cidr"},
	}
	for _, c := range cases {
		o := testOptions()
		c.mod(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

func testOptions() Options {
	return Options{
		Link: "relay0", Tunnel: "liqo-tunnel",
		Table: 1900, InTable: 20001, ConsumerTable: 20002,
		Priority: 1000, Mark: 0x40000000, SocketMark: 0x1900, ListenPort: 51900,
		NftTable: "liqo-relay",
	}
}

// mustPrefixes parses prefixes.
func mustPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

// TestCheckPeerName: a peer name becomes part of the names of its nft sets;
// one that cannot is refused with the name and the reason.
func TestCheckPeerName(t *testing.T) {
	for _, ok := range []string{"b", "cluster-b", "peer_2.east", strings.Repeat("a", maxPeerName)} {
		if err := checkPeerName(ok); err != nil {
			t.Errorf("checkPeerName(%q) = %v, want nil", ok, err)
		}
	}
	for name, want := range map[string]string{
		"":                                 "must be 1 to 200 bytes",
		strings.Repeat("a", maxPeerName+1): "must be 1 to 200 bytes",
		"a b":                              `' ' is not allowed`,
		"a/b":                              `'/' is not allowed`,
	} {
		err := checkPeerName(name)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "peer name") {
			t.Errorf("checkPeerName(%q) = %v, want an error naming the peer name and %q", name, err, want)
		}
	}
}
