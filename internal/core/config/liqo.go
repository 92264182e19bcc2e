package config

import (
	"fmt"
	"net/netip"

	"go.yaml.in/yaml/v3"
)

// Settings of the Liqo gateway integration (docs/liqo-addressing.md §7,
// docs/config.md "liqo"). A relay in TUN mode that runs as a sidecar of a
// Liqo gateway pod enables it with a liqo section.

// Defaults of the liqo section. The table IDs have bit 8 (0x100) clear:
// every table ID Liqo generates has it set, so these can never be Liqo's.
const (
	DefaultLiqoTunnel               = "liqo-tunnel"
	DefaultLiqoInTable              = 20001
	DefaultLiqoConsumerTable        = 20002
	DefaultLiqoRulePriority         = 1000
	DefaultLiqoMark          uint32 = 0x40000000
	DefaultLiqoNftTable             = "liqo-relay"
	// liqoTableBit is set in every Liqo table ID (pkg/route/table.go,
	// generateTableID, Liqo v1.2.0).
	liqoTableBit = 0x100
	// liqoRules is how many consecutive priorities the relay's rules take.
	liqoRules = 3
)

// Liqo configures the relay's part of a Liqo gateway pod. The zero value
// (Enabled false) means no integration.
type Liqo struct {
	// Enabled is set when the configuration has a liqo section.
	Enabled bool
	// Tunnel is Liqo's tunnel interface in the gateway pod.
	Tunnel string
	// InTable holds the copy of Liqo's routes for packets the relay
	// injects into its TUN.
	InTable int
	// ConsumerTable holds the consumer route.
	ConsumerTable int
	// RulePriority is where the relay's three rules start; they move lower
	// when a Liqo rule lands ahead of them.
	RulePriority int
	// Mark is the conntrack and packet mark bit of pinned connections.
	Mark uint32
	// NftTable names the relay's nftables table (family ip).
	NftTable string
	// Consumer routes the relay's own datagrams to the consumer's external
	// CIDR (consumer path); zero CIDR installs no route.
	Consumer LiqoConsumer
}

// LiqoConsumer is the consumer route of the liqo section.
type LiqoConsumer struct {
	// CIDR is the consumer's external CIDR in the consumer's own space.
	CIDR netip.Prefix
	// Source is the gateway pod's address (optional).
	Source netip.Addr
	// Via is the tunnel's next hop (optional; not needed on WireGuard).
	Via netip.Addr
}

// liqo decodes the liqo section; its presence enables the integration.
func (d *decoder) liqo(m map[string]*yaml.Node, c *Config) {
	n := m["liqo"]
	if n == nil {
		return
	}
	l := Liqo{
		Enabled: true, Tunnel: DefaultLiqoTunnel,
		InTable: DefaultLiqoInTable, ConsumerTable: DefaultLiqoConsumerTable,
		RulePriority: DefaultLiqoRulePriority, Mark: DefaultLiqoMark, NftTable: DefaultLiqoNftTable,
	}
	t := d.fields(n, "liqo", "tunnel", "inTable", "consumerTable", "rulePriority", "mark", "nftTable", "consumer")
	if t == nil {
		c.Liqo = l
		return
	}
	d.setString(t, "liqo", "tunnel", &l.Tunnel)
	d.setTable(t, "liqo", "inTable", &l.InTable)
	d.setTable(t, "liqo", "consumerTable", &l.ConsumerTable)
	d.setInt(t, "liqo", "rulePriority", &l.RulePriority)
	d.setMark(t, "liqo", "mark", &l.Mark)
	d.setString(t, "liqo", "nftTable", &l.NftTable)
	if cn := t["consumer"]; cn != nil {
		if ct := d.fields(cn, "liqo.consumer", "cidr", "source", "via"); ct != nil {
			d.setPrefix(ct, "liqo.consumer", "cidr", &l.Consumer.CIDR)
			d.setAddr(ct, "liqo.consumer", "source", &l.Consumer.Source)
			d.setAddr(ct, "liqo.consumer", "via", &l.Consumer.Via)
		}
	}
	c.Liqo = l
}

// setAddr decodes an IP address.
func (d *decoder) setAddr(m map[string]*yaml.Node, parent, name string, dst *netip.Addr) {
	setScalar(d, m, parent, name, "an IP address", dst, func(s string) (netip.Addr, string) {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Addr{}, fmt.Sprintf("%q is not an IP address", s)
		}
		return a, ""
	})
}

// validateLiqo checks the liqo section.
func (c *Config) validateLiqo(e *errList) {
	l := c.Liqo
	if !l.Enabled {
		return
	}
	if c.Mode != ModeTUN {
		e.checkf("liqo", fmt.Sprintf("needs mode %s (the integration programs the gateway pod's kernel), not %q", ModeTUN, c.Mode))
	}
	if !isIfName(l.Tunnel) {
		e.checkf("liqo.tunnel", fmt.Sprintf("%q is not a Linux interface name", l.Tunnel))
	} else if l.Tunnel == c.Tun.Name {
		e.checkf("liqo.tunnel", fmt.Sprintf("%q is the relay's own TUN (tun.name)", l.Tunnel))
	}
	for _, t := range []struct {
		path string
		id   int
	}{{"liqo.inTable", l.InTable}, {"liqo.consumerTable", l.ConsumerTable}} {
		switch {
		case t.id <= 0 || t.id >= 253 && t.id <= 255:
			e.checkf(t.path, fmt.Sprintf("%d is unset or reserved (253 default, 254 main, 255 local)", t.id))
		case t.id&liqoTableBit != 0:
			e.checkf(t.path, fmt.Sprintf("%d has bit 8 (0x100) set, like every table ID Liqo generates: Liqo deletes rules pointing at its tables", t.id))
		case t.id == c.Tun.Table:
			e.checkf(t.path, fmt.Sprintf("%d is also tun.table", t.id))
		}
	}
	if l.InTable == l.ConsumerTable {
		e.checkf("liqo.consumerTable", fmt.Sprintf("%d is also liqo.inTable", l.ConsumerTable))
	}
	if l.RulePriority < 1 || l.RulePriority > maxRulePriority-liqoRules+1 {
		e.checkf("liqo.rulePriority", fmt.Sprintf("%d is out of range 1..%d (the relay's three rules must come before main)", l.RulePriority, maxRulePriority-liqoRules+1))
	}
	switch {
	case l.Mark == 0 || l.Mark&(l.Mark-1) != 0:
		e.checkf("liqo.mark", fmt.Sprintf("%#x must be a single bit", l.Mark))
	case l.Mark&c.Tun.FwMark != 0:
		e.checkf("liqo.mark", fmt.Sprintf("%#x overlaps tun.fwMark %#x", l.Mark, c.Tun.FwMark))
	}
	if !isNftName(l.NftTable) {
		e.checkf("liqo.nftTable", fmt.Sprintf("%q is not an nft identifier (a letter or '_', then letters, digits, '-', '_'; at most 64)", l.NftTable))
	}
	if cs := l.Consumer; cs.CIDR.IsValid() {
		if !cs.CIDR.Addr().Is4() {
			e.checkf("liqo.consumer.cidr", fmt.Sprintf("%s is not IPv4 (Liqo v1.2 remaps IPv4 only)", cs.CIDR))
		} else if cs.CIDR != cs.CIDR.Masked() {
			e.checkf("liqo.consumer.cidr", fmt.Sprintf("%s has host bits set (did you mean %s?)", cs.CIDR, cs.CIDR.Masked()))
		}
		if cs.Source.IsValid() && !cs.Source.Is4() {
			e.checkf("liqo.consumer.source", fmt.Sprintf("%s is not IPv4", cs.Source))
		}
		if cs.Via.IsValid() && !cs.Via.Is4() {
			e.checkf("liqo.consumer.via", fmt.Sprintf("%s is not IPv4", cs.Via))
		}
	} else if cs.Source.IsValid() || cs.Via.IsValid() {
		e.checkf("liqo.consumer.cidr", "required when liqo.consumer.source or liqo.consumer.via is set")
	}
}

// isNftName reports whether s is a safe nft identifier.
func isNftName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && (r == '-' || r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
