package config

import (
	"net/netip"
	"testing"
)

func TestLiqoDefaultsAndFields(t *testing.T) {
	if c := mustParse(t, head); c.Liqo.Enabled {
		t.Errorf("liqo enabled without a liqo section: %+v", c.Liqo)
	}
	c := mustParse(t, head+"liqo: {}\n")
	want := Liqo{Enabled: true, Tunnel: "liqo-tunnel", InTable: 20001, ConsumerTable: 20002,
		RulePriority: 1000, Mark: 0x40000000, NftTable: "liqo-relay"}
	if c.Liqo != want {
		t.Errorf("liqo defaults %+v, want %+v", c.Liqo, want)
	}
	c = mustParse(t, head+"liqo: {tunnel: wg0, inTable: 3072, consumerTable: 3073, rulePriority: 50, mark: 0x100000, nftTable: r,"+
		" consumer: {cidr: 10.70.0.0/16, source: 10.244.3.8, via: 169.254.18.1}}\n")
	want = Liqo{Enabled: true, Tunnel: "wg0", InTable: 3072, ConsumerTable: 3073, RulePriority: 50, Mark: 0x100000, NftTable: "r",
		Consumer: LiqoConsumer{CIDR: netip.MustParsePrefix("10.70.0.0/16"), Source: netip.MustParseAddr("10.244.3.8"), Via: netip.MustParseAddr("169.254.18.1")}}
	if c.Liqo != want {
		t.Errorf("liqo %+v, want %+v", c.Liqo, want)
	}
}

func TestLiqoInvalid(t *testing.T) {
	const l = head + "liqo: "
	for _, tc := range []struct {
		name string
		doc  string
		want []string
	}{
		{"netstack", head + "mode: netstack\nliqo: {}\n", []string{"liqo: needs mode tun"}},
		{"liqo table id", l + "{inTable: 256}\n", []string{"liqo.inTable: 256 has bit 8 (0x100) set"}},
		{"reserved table", l + "{consumerTable: 254}\n", []string{"liqo.consumerTable: 254 is unset or reserved"}},
		{"tun table", l + "{inTable: 3072}\n" + "tun: {table: 3072}\n", []string{"liqo.inTable: 3072 is also tun.table"}},
		{"same tables", l + "{inTable: 3072, consumerTable: 3072}\n", []string{"liqo.consumerTable: 3072 is also liqo.inTable"}},
		{"priority", l + "{rulePriority: 32764}\n", []string{"liqo.rulePriority: 32764 is out of range 1..32763"}},
		{"mark bits", l + "{mark: 3}\n", []string{"liqo.mark: 0x3 must be a single bit"}},
		{"mark overlaps", l + "{mark: 0x1000}\n", []string{"liqo.mark: 0x1000 overlaps tun.fwMark 0x1900"}},
		{"tunnel is tun", l + "{tunnel: relay0}\n", []string{`liqo.tunnel: "relay0" is the relay's own TUN`}},
		{"nft name", l + "{nftTable: 'a;b'}\n", []string{"liqo.nftTable:"}},
		{"consumer v6", l + "{consumer: {cidr: 'fd00::/64'}}\n", []string{"liqo.consumer.cidr: fd00::/64 is not IPv4"}},
		{"consumer host bits", l + "{consumer: {cidr: 10.70.0.1/16}}\n", []string{"liqo.consumer.cidr: 10.70.0.1/16 has host bits set"}},
		{"source without cidr", l + "{consumer: {source: 10.0.0.1}}\n", []string{"liqo.consumer.cidr: required"}},
		{"bad source", l + "{consumer: {cidr: 10.70.0.0/16, source: nope}}\n", []string{`liqo.consumer.source: "nope" is not an IP address`}},
		{"typo", l + "{inTabel: 3}\n", []string{"liqo.inTabel: unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrors(t, parseErrors(t, tc.doc), tc.want)
		})
	}
}
