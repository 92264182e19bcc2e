package netlink

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestRouteOptionsValidate(t *testing.T) {
	good := RouteOptions{Link: "relay0", Table: 100, Priority: 1000, FwMark: 0xca6c, MTU: 1420,
		Addresses: []netip.Prefix{netip.MustParsePrefix("100.64.0.1/32")}}
	if err := good.Validate(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(*RouteOptions)
		want   []string // substrings, each must appear
	}{
		{"empty link", func(o *RouteOptions) { o.Link = "" }, []string{"link: must not be empty"}},
		{"long link", func(o *RouteOptions) { o.Link = "relay-interface0" }, []string{"link:", "longer than 15"}},
		{"main table", func(o *RouteOptions) { o.Table = 254 }, []string{"table: 254"}},
		{"local table", func(o *RouteOptions) { o.Table = 255 }, []string{"table: 255"}},
		{"default table", func(o *RouteOptions) { o.Table = 253 }, []string{"table: 253"}},
		{"no table", func(o *RouteOptions) { o.Table = 0 }, []string{"table: 0"}},
		{"negative table", func(o *RouteOptions) { o.Table = -1 }, []string{"table: -1"}},
		{"priority 0", func(o *RouteOptions) { o.Priority = 0 }, []string{"priority: 0"}},
		{"priority after main", func(o *RouteOptions) { o.Priority = 32766 }, []string{"priority: 32766"}},
		{"no mark", func(o *RouteOptions) { o.FwMark = 0 }, []string{"fwmark"}},
		{"tiny mtu", func(o *RouteOptions) { o.MTU = 10 }, []string{"mtu: 10"}},
		{"bad address", func(o *RouteOptions) { o.Addresses = append(o.Addresses, netip.Prefix{}) }, []string{"addresses[1]"}},
		{"every error at once", func(o *RouteOptions) { *o = RouteOptions{} }, []string{"link:", "table:", "priority:", "fwmark:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := good
			o.Addresses = slices.Clone(good.Addresses)
			c.mutate(&o)
			err := o.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	ok := good
	ok.MTU = 0
	if err := ok.Validate(); err != nil {
		t.Errorf("mtu 0 (keep the device's) rejected: %v", err)
	}
}

func rtMustPrefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestRtNormalize(t *testing.T) {
	got, err := rtNormalize(rtMustPrefixes("10.2.3.4/16", "fd00::1/64", "10.2.0.0/16", "10.1.0.0/24", "10.1.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	want := rtMustPrefixes("10.1.0.0/16", "10.1.0.0/24", "10.2.0.0/16", "fd00::/64")
	if !slices.Equal(got, want) {
		t.Errorf("rtNormalize = %v, want %v", got, want)
	}
	if _, err := rtNormalize([]netip.Prefix{{}}); err == nil {
		t.Error("invalid prefix accepted")
	}
}

func TestRtDiff(t *testing.T) {
	cases := []struct {
		have, want, add, del []string
	}{
		{nil, nil, nil, nil},
		{nil, []string{"10.1.0.0/16"}, []string{"10.1.0.0/16"}, nil},
		{[]string{"10.1.0.0/16"}, nil, nil, []string{"10.1.0.0/16"}},
		{[]string{"10.1.0.0/16", "10.2.0.0/16"}, []string{"10.2.0.0/16", "10.3.0.0/16"},
			[]string{"10.3.0.0/16"}, []string{"10.1.0.0/16"}},
		{[]string{"10.1.0.0/16"}, []string{"10.1.0.0/16"}, nil, nil},
	}
	for _, c := range cases {
		add, del := rtDiff(rtMustPrefixes(c.have...), rtMustPrefixes(c.want...))
		if !slices.Equal(add, rtMustPrefixes(c.add...)) || !slices.Equal(del, rtMustPrefixes(c.del...)) {
			t.Errorf("rtDiff(%v, %v) = +%v -%v, want +%v -%v", c.have, c.want, add, del, c.add, c.del)
		}
	}
}
