//go:build linux

package tun

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// rtFamilyName names an address family in messages.
func rtFamilyName(fam int) string {
	if fam == netlink.FAMILY_V6 {
		return "ipv6"
	}
	return "ipv4"
}

// rtRule builds our policy rule: "not fwmark mark lookup table" at prio.
func rtRule(fam, table, prio int, mark uint32) *netlink.Rule {
	r := netlink.NewRule()
	r.Family = fam
	r.Table = table
	r.Priority = prio
	r.Mark = mark
	r.Invert = true
	return r
}

// rtIsOurs reports whether a listed rule is one of ours: it looks up our
// dedicated table and excludes our mark. The priority is not compared,
// because EnsureRules may have moved the rule.
func rtIsOurs(r netlink.Rule, table int, mark uint32) bool {
	return r.Table == table && r.Invert && r.Mark == mark && r.Goto < 0
}

// ensureRule makes sure exactly one rule of ours exists for the family and
// that no foreign rule ahead of it shadows our table. Called with m.mu held
// (or before the manager is shared).
func (m *RouteManager) ensureRule(fam int) (repaired bool, err error) {
	// Two passes at most: the second sees the rule the first one added.
	for range 2 {
		rules, err := m.h.RuleList(fam)
		if err != nil {
			return repaired, fmt.Errorf("list %s rules: %w", rtFamilyName(fam), err)
		}
		ours := -1
		for i, r := range rules {
			if !rtIsOurs(r, m.opts.Table, m.opts.FwMark) {
				continue
			}
			if ours < 0 {
				ours = i
				continue
			}
			// A duplicate, e.g. left by a crash mid-move: keep the first.
			if err := m.h.RuleDel(rtRule(fam, r.Table, r.Priority, r.Mark)); err != nil && !errors.Is(err, unix.ENOENT) {
				return repaired, fmt.Errorf("delete duplicate %s rule at %d: %w", rtFamilyName(fam), r.Priority, err)
			}
			m.log.Warn("deleted duplicate policy rule", "family", rtFamilyName(fam), "priority", r.Priority)
			repaired = true
		}
		if ours < 0 {
			prio := m.prio[fam]
			if err := m.h.RuleAdd(rtRule(fam, m.opts.Table, prio, m.opts.FwMark)); err != nil {
				return repaired, fmt.Errorf("add %s rule \"not fwmark %#x lookup %d\" at %d: %w",
					rtFamilyName(fam), m.opts.FwMark, m.opts.Table, prio, err)
			}
			if m.started { // the first install is logged by NewRouteManager
				m.log.Warn("re-added missing policy rule", "family", rtFamilyName(fam), "priority", prio)
			}
			repaired = true
			continue
		}
		m.prio[fam] = rules[ours].Priority
		shadow, found, err := m.lowestShadow(fam, rules[:ours])
		if err != nil {
			return repaired, err
		}
		if !found {
			return repaired, nil
		}
		moved, err := m.moveAhead(fam, rules[ours].Priority, shadow)
		return repaired || moved, err
	}
	return repaired, nil
}

// moveAhead re-adds our rule just ahead of the shadowing rule and then
// deletes it from its old priority. moved reports whether the new rule went
// in.
func (m *RouteManager) moveAhead(fam, old int, shadow netlink.Rule) (moved bool, err error) {
	prio := shadow.Priority - 1
	if prio < rtMinPriority {
		return false, fmt.Errorf("%s: foreign rule %q at priority %d: %w", rtFamilyName(fam), shadow.String(), shadow.Priority, ErrRuleShadowed)
	}
	if err := m.h.RuleAdd(rtRule(fam, m.opts.Table, prio, m.opts.FwMark)); err != nil {
		return false, fmt.Errorf("add %s rule at %d ahead of %q: %w", rtFamilyName(fam), prio, shadow.String(), err)
	}
	m.prio[fam] = prio
	m.log.Warn("moved policy rule ahead of a shadowing rule",
		"family", rtFamilyName(fam), "from", old, "to", prio, "shadowing", shadow.String())
	if err := m.h.RuleDel(rtRule(fam, m.opts.Table, old, m.opts.FwMark)); err != nil && !errors.Is(err, unix.ENOENT) {
		// The next EnsureRules deletes it as a duplicate.
		return true, fmt.Errorf("delete %s rule at old priority %d: %w", rtFamilyName(fam), old, err)
	}
	return true, nil
}

// lowestShadow returns the shadowing rule with the lowest priority among the
// rules listed ahead of ours.
func (m *RouteManager) lowestShadow(fam int, ahead []netlink.Rule) (netlink.Rule, bool, error) {
	var ours []netip.Prefix
	for _, p := range m.wanted() {
		if p.Addr().Is6() == (fam == netlink.FAMILY_V6) {
			ours = append(ours, p)
		}
	}
	if len(ours) == 0 {
		return netlink.Rule{}, false, nil // nothing routed, nothing to shadow
	}
	cache := map[int][]rtTableRoute{}
	routesOf := func(table int) ([]rtTableRoute, error) {
		if rs, ok := cache[table]; ok {
			return rs, nil
		}
		rs, err := m.h.RouteListFiltered(fam, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return nil, fmt.Errorf("list routes of table %d: %w", table, err)
		}
		var out []rtTableRoute
		for _, r := range rs {
			if p, ok := rtPrefix(r.Dst); ok {
				out = append(out, rtTableRoute{dst: p, throw: r.Type == unix.RTN_THROW})
			}
		}
		cache[table] = out
		return out, nil
	}
	var best netlink.Rule
	found := false
	for _, r := range ahead {
		if found && r.Priority >= best.Priority {
			continue
		}
		if !rtCouldShadow(r, m.opts.Table) {
			continue
		}
		routes, err := routesOf(r.Table)
		if err != nil {
			return netlink.Rule{}, false, err
		}
		if rtShadows(r, routes, ours) {
			best, found = r, true
		}
	}
	return best, found, nil
}

// rtTableRoute is the part of a foreign table's route that decides shadowing.
type rtTableRoute struct {
	dst   netip.Prefix
	throw bool // "throw" routes send the lookup on to the next rule
}

// rtCouldShadow reports whether a foreign rule ahead of ours is the kind
// that can shadow our table: a plain table lookup (not our table, not the
// local table, not goto/blackhole/prohibit/unreachable, which have table 0)
// that matches (nearly) all traffic. A rule that selects traffic by source,
// interface, mark, TOS, ports, protocol, uid or tunnel id is another agent's
// deliberate policy for its own traffic and is left alone; an inverted rule
// ("not ...", like wg-quick's "not fwmark X lookup X") matches all but a
// sliver of traffic and counts as matching all.
func rtCouldShadow(r netlink.Rule, ourTable int) bool {
	if r.Table == 0 || r.Table == rtTableLocal || r.Table == ourTable || r.Goto >= 0 {
		return false
	}
	if r.Invert {
		return true
	}
	selective := r.Src != nil || r.IifName != "" || r.OifName != "" || r.Mark != 0 ||
		r.Tos != 0 || r.Dport != nil || r.Sport != nil || r.IPProto != 0 ||
		r.UIDRange != nil || r.TunID != 0
	return !selective
}

// rtShadows reports whether rule r, already known to be a catch-all lookup
// ahead of ours (rtCouldShadow), would answer for some of our prefixes:
// its table holds a non-throw route, longer than the rule's
// suppress_prefixlength, that overlaps one of our prefixes (restricted to the
// rule's destination selector when it has one). Overlap, not containment: a
// foreign default route catches everything, and a foreign /24 inside our /16
// steals that /24.
func rtShadows(r netlink.Rule, routes []rtTableRoute, ours []netip.Prefix) bool {
	if !r.Invert && r.Dst != nil {
		dst, ok := rtPrefix(r.Dst)
		if !ok {
			return false
		}
		var narrowed []netip.Prefix
		for _, p := range ours {
			if p.Overlaps(dst) {
				narrowed = append(narrowed, p)
			}
		}
		ours = narrowed
	}
	for _, rt := range routes {
		if rt.throw {
			continue
		}
		if r.SuppressPrefixlen >= 0 && rt.dst.Bits() <= r.SuppressPrefixlen {
			continue
		}
		if rtOverlapsAny(rt.dst, ours) {
			return true
		}
	}
	return false
}

// deleteRules deletes every rule of ours in every family, at any priority.
func (m *RouteManager) deleteRules() error {
	return rtDeleteRules(m.h, m.opts.Table, -1, m.opts.FwMark)
}

// rtDeleteRules deletes, in both families, the rules that are ours by
// signature (rtIsOurs) and, when prio >= 0, any rule looking up table at
// exactly prio (a leftover of a run with another fwmark).
func rtDeleteRules(h *netlink.Handle, table, prio int, mark uint32) error {
	var errs []error
	for _, fam := range []int{netlink.FAMILY_V4, netlink.FAMILY_V6} {
		rules, err := h.RuleList(fam)
		if err != nil {
			if fam == netlink.FAMILY_V6 && errors.Is(err, unix.EAFNOSUPPORT) {
				continue
			}
			errs = append(errs, fmt.Errorf("list %s rules: %w", rtFamilyName(fam), err))
			continue
		}
		for _, r := range rules {
			if !rtIsOurs(r, table, mark) && (prio < 0 || r.Table != table || r.Priority != prio) {
				continue
			}
			del := rtRule(fam, r.Table, r.Priority, r.Mark)
			del.Invert = r.Invert
			del.Mask = r.Mask
			if err := h.RuleDel(del); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("delete %s rule %q: %w", rtFamilyName(fam), r.String(), err))
			}
		}
	}
	return errors.Join(errs...)
}
