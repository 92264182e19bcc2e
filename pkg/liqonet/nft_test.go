package liqonet

import (
	"net/netip"
	"strings"
	"testing"
)

func TestTableScript(t *testing.T) {
	o := testOptions()
	s := tableScript(o,
		[]netip.Prefix{netip.MustParsePrefix("10.92.0.12/32"), netip.MustParsePrefix("10.92.0.12/32"), netip.MustParsePrefix("fd00::1/128")},
		nil)
	for _, want := range []string{
		"add table ip liqo-relay\ndelete table ip liqo-relay\n",
		"elements = { 10.92.0.12/32 }",
		"priority -101;",
		`iifname != "liqo-tunnel" iifname != "relay0" ip saddr @mapped ip daddr @peers ct mark set ct mark | 0x40000000`,
		`iifname "relay0" ct mark set ct mark | 0x40000000 dnat to ip daddr`,
		"ct mark & 0x40000000 == 0x40000000 meta mark set meta mark | 0x40000000",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "fd00") {
		t.Errorf("script renders an IPv6 prefix:\n%s", s)
	}
	if strings.Count(s, "elements") != 1 {
		t.Errorf("empty set rendered with elements:\n%s", s)
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
