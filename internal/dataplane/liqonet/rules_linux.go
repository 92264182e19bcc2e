//go:build linux

package liqonet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
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

// sameRule reports whether listed rule r is spec at spec's priority.
func sameRule(r netlink.Rule, spec *netlink.Rule) bool {
	if r.Priority != spec.Priority || r.Table != spec.Table || r.Mark != spec.Mark || r.IifName != spec.IifName || r.IPProto != spec.IPProto {
		return false
	}
	if (r.Dst == nil) != (spec.Dst == nil) || r.Dst != nil && r.Dst.String() != spec.Dst.String() {
		return false
	}
	if (r.Sport == nil) != (spec.Sport == nil) || r.Sport != nil && *r.Sport != *spec.Sport {
		return false
	}
	return true
}

// ensureRules makes our rules exist, once each, at consecutive priorities
// ahead of every foreign rule except the local table's (priority 0). Liqo
// adds its rules without a priority, and the kernel numbers a new rule just
// above the first rule after "local", that is ahead of ours: then ours move
// below it, added before the old ones are deleted so there is no gap.
// Rules looking up the relay's own Table that are not ours (the TUN route
// manager's) are not foreign. Called with m.mu held.
func (m *Manager) ensureRules(started bool) (moved bool, err error) {
	rules, err := m.h.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return false, fmt.Errorf("liqo: list rules: %w", err)
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
		base = foreign - n
		if base < 1 {
			return false, fmt.Errorf("liqo: rule at priority %d: %w", foreign, ErrRulesCrowded)
		}
	}
	specs := m.ruleSpecs(base)
	changed := false
	for _, spec := range specs {
		found := false
		for _, r := range rules {
			if sameRule(r, spec) {
				found = true
				break
			}
		}
		if found {
			continue
		}
		if err := m.h.RuleAdd(spec); err != nil && !errors.Is(err, unix.EEXIST) {
			return changed, fmt.Errorf("liqo: add rule %s at %d: %w", spec, spec.Priority, err)
		}
		changed = true
	}
	// Add before delete: only rules equal to a spec survive.
	if err := m.deleteRules(specs); err != nil {
		return true, err
	}
	if base != m.base {
		m.log.Warn("moved policy rules ahead of a foreign rule", "from", m.base, "to", base, "foreign", foreign)
		m.base = base
		if started {
			m.reasserts++
		}
		moved = true
	} else if changed && started {
		m.log.Warn("re-added missing policy rules", "priority", base)
		moved = true
	}
	return moved, nil
}

// deleteRules deletes every rule of ours that is not one of keep.
func (m *Manager) deleteRules(keep []*netlink.Rule) error {
	rules, err := m.h.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("liqo: list rules: %w", err)
	}
	var errs []error
	for i := range rules {
		r := rules[i]
		if !m.isOurs(r) {
			continue
		}
		kept := false
		for _, k := range keep {
			if sameRule(r, k) {
				kept = true
			}
		}
		if kept {
			continue
		}
		if err := m.h.RuleDel(&r); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("liqo: delete rule %s: %w", r.String(), err))
		}
	}
	return errors.Join(errs...)
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
