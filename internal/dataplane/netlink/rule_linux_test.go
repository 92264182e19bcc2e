//go:build linux

package netlink

import (
	"net"
	"testing"

	vnl "github.com/vishvananda/netlink"
)

// rtTestRule returns a listed-looking rule: no selectors, lookup table.
func rtTestRule(table int, mutate func(*vnl.Rule)) vnl.Rule {
	r := vnl.NewRule()
	r.Table = table
	r.Priority = 500
	if mutate != nil {
		mutate(r)
	}
	return *r
}

func rtTestNet(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestRtCouldShadow(t *testing.T) {
	const ours = 100
	cases := []struct {
		name string
		rule vnl.Rule
		want bool
	}{
		{"catch-all lookup", rtTestRule(200, nil), true},
		{"main table", rtTestRule(254, nil), true},
		{"destination only", rtTestRule(200, func(r *vnl.Rule) { r.Dst = rtTestNet("10.0.0.0/8") }), true},
		{"inverted mark (wg-quick)", rtTestRule(200, func(r *vnl.Rule) { r.Mark, r.Invert = 0x1, true }), true},
		{"local table", rtTestRule(255, nil), false},
		{"our table", rtTestRule(ours, nil), false},
		{"no table (blackhole/prohibit)", rtTestRule(0, nil), false},
		{"goto", rtTestRule(200, func(r *vnl.Rule) { r.Goto = 600 }), false},
		{"source", rtTestRule(200, func(r *vnl.Rule) { r.Src = rtTestNet("192.0.2.0/24") }), false},
		{"iif", rtTestRule(200, func(r *vnl.Rule) { r.IifName = "eth0" }), false},
		{"oif", rtTestRule(200, func(r *vnl.Rule) { r.OifName = "eth0" }), false},
		{"mark", rtTestRule(200, func(r *vnl.Rule) { r.Mark = 0x1 }), false},
		{"tos", rtTestRule(200, func(r *vnl.Rule) { r.Tos = 0x10 }), false},
		{"dport", rtTestRule(200, func(r *vnl.Rule) { r.Dport = vnl.NewRulePortRange(53, 53) }), false},
		{"ipproto", rtTestRule(200, func(r *vnl.Rule) { r.IPProto = 17 }), false},
		{"uid", rtTestRule(200, func(r *vnl.Rule) { r.UIDRange = vnl.NewRuleUIDRange(1000, 1000) }), false},
	}
	for _, c := range cases {
		if got := rtCouldShadow(c.rule, ours); got != c.want {
			t.Errorf("%s: rtCouldShadow = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRtShadows(t *testing.T) {
	routes := func(ss ...string) []rtTableRoute {
		var out []rtTableRoute
		for _, s := range ss {
			throw := s[0] == '!'
			if throw {
				s = s[1:]
			}
			out = append(out, rtTableRoute{dst: rtMustPrefixes(s)[0], throw: throw})
		}
		return out
	}
	ours := rtMustPrefixes("10.1.0.0/16", "10.2.0.0/16")
	cases := []struct {
		name   string
		rule   vnl.Rule
		routes []rtTableRoute
		want   bool
	}{
		{"empty table", rtTestRule(200, nil), nil, false},
		{"unrelated routes", rtTestRule(200, nil), routes("192.168.0.0/16", "10.3.0.0/16"), false},
		{"same prefix", rtTestRule(200, nil), routes("10.1.0.0/16"), true},
		{"covering prefix", rtTestRule(200, nil), routes("10.0.0.0/8"), true},
		{"more specific inside ours", rtTestRule(200, nil), routes("10.2.5.0/24"), true},
		{"default route", rtTestRule(200, nil), routes("0.0.0.0/0"), true},
		{"throw route", rtTestRule(200, nil), routes("!10.0.0.0/8"), false},
		{"default suppressed (suppress_prefixlength 0)",
			rtTestRule(254, func(r *vnl.Rule) { r.SuppressPrefixlen = 0 }), routes("0.0.0.0/0"), false},
		{"specific not suppressed by suppress_prefixlength 0",
			rtTestRule(254, func(r *vnl.Rule) { r.SuppressPrefixlen = 0 }), routes("0.0.0.0/0", "10.1.0.0/16"), true},
		{"suppress_prefixlength 16 hides /16",
			rtTestRule(254, func(r *vnl.Rule) { r.SuppressPrefixlen = 16 }), routes("10.1.0.0/16"), false},
		{"destination selector elsewhere",
			rtTestRule(200, func(r *vnl.Rule) { r.Dst = rtTestNet("10.9.0.0/16") }), routes("0.0.0.0/0"), false},
		{"destination selector on ours",
			rtTestRule(200, func(r *vnl.Rule) { r.Dst = rtTestNet("10.2.3.0/24") }), routes("0.0.0.0/0"), true},
		{"inverted destination selector counts as catch-all",
			rtTestRule(200, func(r *vnl.Rule) { r.Dst, r.Invert = rtTestNet("10.9.0.0/16"), true }), routes("10.1.0.0/16"), true},
	}
	for _, c := range cases {
		if got := rtShadows(c.rule, c.routes, ours); got != c.want {
			t.Errorf("%s: rtShadows = %v, want %v", c.name, got, c.want)
		}
	}
}
