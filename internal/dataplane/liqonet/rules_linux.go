//go:build linux

package liqonet

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	rtnl "github.com/liqo-relay/relay/internal/dataplane/netlink"
)

// ruleSpecs returns the relay's rules, in priority order from base: pinned
// connections by mark, packets injected into the TUN, and (when configured)
// the relay's own datagrams toward the consumer.
func (m *Manager) ruleSpecs(base int) []*netlink.Rule {
	mark := netlink.NewRule()
	mark.Family = netlink.FAMILY_V4
	mark.Mark = m.opts.Mark
	mask := m.opts.Mark
	mark.Mask = &mask
	mark.Table = m.opts.Table

	in := netlink.NewRule()
	in.Family = netlink.FAMILY_V4
	in.IifName = m.opts.Link
	in.Table = m.opts.InTable

	specs := []*netlink.Rule{mark, in}
	if c := m.opts.Consumer; !c.IsZero() {
		r := netlink.NewRule()
		r.Family = netlink.FAMILY_V4
		r.IifName = "lo"
		r.IPProto = unix.IPPROTO_UDP
		r.Sport = netlink.NewRulePortRange(m.opts.ListenPort, m.opts.ListenPort)
		r.Dst = ipNet(c.CIDR)
		r.Table = m.opts.ConsumerTable
		specs = append(specs, r)
	}
	for i, r := range specs {
		r.Priority = base + i
	}
	return specs
}

// isOurs reports whether a listed rule is one of ours, at any priority.
func (m *Manager) isOurs(r netlink.Rule) bool {
	switch r.Table {
	case m.opts.InTable, m.opts.ConsumerTable:
		return true
	case m.opts.Table:
		return !r.Invert && r.Mark == m.opts.Mark
	}
	return false
}

// rules is the relay's Liqo rule set: the IPv4 rules isOurs recognizes.
func (m *Manager) rules() rtnl.RuleSet {
	return rtnl.RuleSet{Handle: m.h, Family: netlink.FAMILY_V4, Ours: m.isOurs}
}

// ensureRules makes our rules exist, once each, at consecutive priorities
// ahead of every foreign rule except the local table's (priority 0). Liqo
// adds its rules without a priority, and the kernel numbers a new rule just
// above the first rule after "local", that is ahead of ours: then ours move
// below it, added before the old ones are deleted so there is no gap.
// Rules looking up the relay's own Table that are not ours (the TUN route
// manager's) are not foreign. Called with m.mu held.
func (m *Manager) ensureRules(started bool) (moved bool, err error) {
	set := m.rules()
	rules, err := set.List()
	if err != nil {
		return false, fmt.Errorf("liqo: %w", err)
	}
	n := len(m.ruleSpecs(0))
	foreign := -1
	for _, r := range rules {
		if r.Priority <= 0 || m.isOurs(r) || r.Table == m.opts.Table {
			continue
		}
		if foreign < 0 || r.Priority < foreign {
			foreign = r.Priority
		}
	}
	base := m.base
	if foreign >= 0 && base+n-1 >= foreign {
		b, ok := rtnl.Ahead(foreign, n)
		if !ok {
			return false, fmt.Errorf("liqo: rule at priority %d: %w", foreign, ErrRulesCrowded)
		}
		base = b
	}
	added, _, err := set.Sync(rules, m.ruleSpecs(base))
	if err != nil {
		return len(added) > 0, fmt.Errorf("liqo: %w", err)
	}
	if base != m.base {
		m.log.Warn("moved policy rules ahead of a foreign rule", "from", m.base, "to", base, "foreign", foreign)
		m.base = base
		if started {
			m.reasserts++
		}
		moved = true
	} else if len(added) > 0 && started {
		m.log.Warn("re-added missing policy rules", "priority", base)
		moved = true
	}
	return moved, nil
}

// deleteRules deletes every rule of ours.
func (m *Manager) deleteRules() error {
	if err := m.rules().Clear(nil); err != nil {
		return fmt.Errorf("liqo: %w", err)
	}
	return nil
}

// ensureConsumerRoute installs the consumer route in ConsumerTable when it is
// configured.
func (m *Manager) ensureConsumerRoute() (changed bool, err error) {
	c := m.opts.Consumer
	if c.IsZero() {
		// A route left by an earlier run that had one goes.
		have, err := m.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: m.opts.ConsumerTable}, netlink.RT_FILTER_TABLE)
		if err != nil || len(have) == 0 {
			return false, err
		}
		return true, flushTable(m.h, m.opts.ConsumerTable)
	}
	link, err := m.h.LinkByName(m.opts.Tunnel)
	if err != nil {
		// Liqo's tunnel may come up after the relay: the next Ensure adds it.
		m.log.Debug("liqo tunnel not found yet: no consumer route", "tunnel", m.opts.Tunnel, "err", err)
		return false, nil
	}
	r := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Dst:       ipNet(c.CIDR),
		Table:     m.opts.ConsumerTable,
		Protocol:  netlink.RouteProtocol(unix.RTPROT_STATIC),
	}
	if c.Source.IsValid() {
		r.Src = net.IP(c.Source.AsSlice())
	}
	if c.Via.IsValid() {
		r.Gw = net.IP(c.Via.AsSlice())
		r.Flags = int(netlink.FLAG_ONLINK)
	} else {
		r.Scope = netlink.SCOPE_LINK
	}
	have, err := m.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: m.opts.ConsumerTable}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return false, fmt.Errorf("liqo: list routes of table %d: %w", m.opts.ConsumerTable, err)
	}
	if len(have) == 1 && sameRoute(have[0], *r) {
		return false, nil // a replace would notify the watcher for nothing
	}
	if err := m.h.RouteReplace(r); err != nil {
		return false, fmt.Errorf("liqo: consumer route %s dev %s: %w", c.CIDR, m.opts.Tunnel, err)
	}
	return true, nil
}

// ipNet converts a prefix.
func ipNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
