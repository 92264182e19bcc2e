//go:build linux

package liqonet

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Kernel tables the mirror never copies from.
const (
	tableDefault = 253
	tableMain    = 254
	tableLocal   = 255
)

// sourceTables returns the tables Liqo selects for traffic arriving from its
// tunnel: every table of a rule "iif <Tunnel> ... lookup T" that is not ours
// or the kernel's. Those hold the per-node routes to pods ("<pod>/32 via
// <node>" and "<node>/32 dev <geneve> scope link").
func (m *Manager) sourceTables(rules []netlink.Rule) []int {
	var out []int
	for _, r := range rules {
		if r.IifName != m.opts.Tunnel || m.isOurs(r) || r.Goto >= 0 {
			continue
		}
		switch r.Table {
		case 0, tableDefault, tableMain, tableLocal, m.opts.Table:
			continue
		}
		if !slices.Contains(out, r.Table) {
			out = append(out, r.Table)
		}
	}
	slices.Sort(out)
	return out
}

// syncInTable makes InTable a copy of the unicast routes of the source
// tables: a rule "iif <Tunnel> lookup <Liqo table>" would not do, because
// Liqo's CleanRules deletes any rule that points at one of its tables and is
// not its own. Link-scope routes go in first, so that a copied gateway is
// reachable when its route is added. When two source tables route the same
// destination the first (lowest table ID) wins. Called with m.mu held.
func (m *Manager) syncInTable() (changed bool, err error) {
	rules, err := m.h.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return false, fmt.Errorf("liqo: list rules: %w", err)
	}
	var want []netlink.Route
	seen := map[string]bool{}
	for _, t := range m.sourceTables(rules) {
		routes, err := m.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: t}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return false, fmt.Errorf("liqo: list routes of table %d: %w", t, err)
		}
		for _, r := range routes {
			if r.Type != unix.RTN_UNICAST || r.Dst == nil || len(r.MultiPath) > 0 {
				continue
			}
			if seen[r.Dst.String()] {
				continue
			}
			seen[r.Dst.String()] = true
			want = append(want, netlink.Route{
				LinkIndex: r.LinkIndex, Dst: r.Dst, Gw: r.Gw, Src: r.Src,
				Scope: r.Scope, Flags: r.Flags, Table: m.opts.InTable,
				Protocol: netlink.RouteProtocol(unix.RTPROT_STATIC),
			})
		}
	}
	// Link-scope (no gateway) first.
	slices.SortStableFunc(want, func(a, b netlink.Route) int {
		return boolInt(a.Gw != nil) - boolInt(b.Gw != nil)
	})
	have, err := m.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: m.opts.InTable}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return false, fmt.Errorf("liqo: list routes of table %d: %w", m.opts.InTable, err)
	}
	var errs []error
	for i := range have {
		if slices.ContainsFunc(want, func(w netlink.Route) bool { return sameRoute(have[i], w) }) {
			continue
		}
		if err := m.h.RouteDel(&have[i]); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("liqo: delete copied route %s: %w", have[i].Dst, err))
			continue
		}
		changed = true
	}
	for i := range want {
		if slices.ContainsFunc(have, func(h netlink.Route) bool { return sameRoute(h, want[i]) }) {
			continue
		}
		if err := m.h.RouteReplace(&want[i]); err != nil {
			errs = append(errs, fmt.Errorf("liqo: copy route %s: %w", want[i].Dst, err))
			continue
		}
		changed = true
	}
	if changed {
		m.log.Debug("copied Liqo's tunnel routes", "routes", len(want), "table", m.opts.InTable)
	}
	return changed, errors.Join(errs...)
}

// sameRoute compares what the copy and the consumer route set.
func sameRoute(a, b netlink.Route) bool {
	return a.LinkIndex == b.LinkIndex && a.Dst.String() == b.Dst.String() &&
		a.Gw.Equal(b.Gw) && a.Src.Equal(b.Src) && a.Scope == b.Scope
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
