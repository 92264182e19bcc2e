//go:build linux

package netlink

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// rtRule builds our policy rule: "not fwmark mark lookup table" at prio.
func rtRule(fam, table, prio int, mark uint32) *vnl.Rule {
	r := vnl.NewRule()
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
func rtIsOurs(r vnl.Rule, table int, mark uint32) bool {
	return r.Table == table && r.Invert && r.Mark == mark && r.Goto < 0
}

// rtRules is the rule set of ours in family fam.
func rtRules(h *vnl.Handle, fam, table int, mark uint32) RuleSet {
	return RuleSet{Handle: h, Family: fam, Ours: func(r vnl.Rule) bool { return rtIsOurs(r, table, mark) }}
}

// ensureRule makes sure exactly one rule of ours exists for the family and
// that no foreign rule ahead of it shadows our table. Called with m.mu held
// (or before the manager is shared).
func (m *RouteManager) ensureRule(fam int) (repaired bool, err error) {
	set := rtRules(m.h, fam, m.opts.Table, m.opts.FwMark)
	// Two passes at most: the second sees the rule the first one added.
	for range 2 {
		rules, err := set.List()
		if err != nil {
			return repaired, err
		}
		ours := slices.IndexFunc(rules, set.Ours)
		if ours >= 0 {
			r, err := m.placeRule(set, rules, ours)
			return repaired || r, err
		}
		prio := m.prio[fam]
		if _, _, err := set.Sync(rules, []*vnl.Rule{m.rule(fam, prio)}); err != nil {
			return repaired, fmt.Errorf("%s rule \"not fwmark %#x lookup %d\": %w", FamilyName(fam), m.opts.FwMark, m.opts.Table, err)
		}
		if m.started { // the first install is logged by NewRouteManager
			m.log.Warn("re-added missing policy rule", "family", FamilyName(fam), "priority", prio)
		}
		repaired = true
	}
	return repaired, nil
}

// placeRule keeps the first of our rules listed, rules[ours], where it is
// unless a foreign rule ahead of it shadows our table: then the rule moves
// just ahead of the lowest shadowing one (re-added there, then deleted from
// its old priority, so no packet sees a gap). Duplicates of ours, left by a
// crash in the middle of a move, are deleted. The rule's priority sticks.
func (m *RouteManager) placeRule(set RuleSet, rules []vnl.Rule, ours int) (repaired bool, err error) {
	fam, old := set.Family, rules[ours].Priority
	m.prio[fam] = old
	shadow, found, err := m.lowestShadow(fam, rules[:ours])
	if err != nil {
		return false, err
	}
	prio := old
	var errShadow error
	if found {
		if p, ok := Ahead(shadow.Priority, 1); ok {
			prio = p
		} else {
			errShadow = fmt.Errorf("%s: foreign rule %q at priority %d: %w", FamilyName(fam), shadow.String(), shadow.Priority, ErrRuleShadowed)
		}
	}
	spec := m.rule(fam, prio)
	added, deleted, err := set.Sync(rules, []*vnl.Rule{spec})
	if len(added) > 0 || containsRule(rules, spec) {
		m.prio[fam] = prio
		if prio != old {
			m.log.Warn("moved policy rule ahead of a shadowing rule",
				"family", FamilyName(fam), "from", old, "to", prio, "shadowing", shadow.String())
		}
	}
	for _, d := range deleted {
		if !SameRule(d, &rules[ours]) { // not the moved rule's old place
			m.log.Warn("deleted duplicate policy rule", "family", FamilyName(fam), "priority", d.Priority)
		}
	}
	return len(added) > 0 || len(deleted) > 0, errors.Join(errShadow, err)
}

// rule builds our rule of family fam at prio.
func (m *RouteManager) rule(fam, prio int) *vnl.Rule {
	return rtRule(fam, m.opts.Table, prio, m.opts.FwMark)
}

// lowestShadow returns the shadowing rule with the lowest priority among the
// rules listed ahead of ours.
func (m *RouteManager) lowestShadow(fam int, ahead []vnl.Rule) (vnl.Rule, bool, error) {
	var ours []netip.Prefix
	for _, p := range m.wanted() {
		if p.Addr().Is6() == (fam == vnl.FAMILY_V6) {
			ours = append(ours, p)
		}
	}
	if len(ours) == 0 {
		return vnl.Rule{}, false, nil // nothing routed, nothing to shadow
	}
	cache := map[int][]rtTableRoute{}
	routesOf := func(table int) ([]rtTableRoute, error) {
		if rs, ok := cache[table]; ok {
			return rs, nil
		}
		rs, err := m.h.RouteListFiltered(fam, &vnl.Route{Table: table}, vnl.RT_FILTER_TABLE)
		if err != nil {
			return nil, fmt.Errorf("list routes of table %d: %w", table, err)
		}
		var out []rtTableRoute
		for _, r := range rs {
			if p, ok := Prefix(r.Dst); ok {
				out = append(out, rtTableRoute{dst: p, throw: r.Type == unix.RTN_THROW})
			}
		}
		cache[table] = out
		return out, nil
	}
	var best vnl.Rule
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
			return vnl.Rule{}, false, err
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
func rtCouldShadow(r vnl.Rule, ourTable int) bool {
	if r.Table == 0 || r.Table == TableLocal || r.Table == ourTable || r.Goto >= 0 {
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
func rtShadows(r vnl.Rule, routes []rtTableRoute, ours []netip.Prefix) bool {
	if !r.Invert && r.Dst != nil {
		dst, ok := Prefix(r.Dst)
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
func rtDeleteRules(h *vnl.Handle, table, prio int, mark uint32) error {
	var errs []error
	for _, fam := range []int{vnl.FAMILY_V4, vnl.FAMILY_V6} {
		leftover := func(r vnl.Rule) bool { return prio >= 0 && r.Table == table && r.Priority == prio }
		err := rtRules(h, fam, table, mark).Clear(leftover)
		if fam == vnl.FAMILY_V6 && errors.Is(err, unix.EAFNOSUPPORT) {
			continue
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
