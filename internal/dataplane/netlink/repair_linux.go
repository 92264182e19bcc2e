//go:build linux

package netlink

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// apply adds and deletes routes in our table. It tries every change and
// returns all failures.
func (m *RouteManager) apply(add, del []netip.Prefix) error {
	var errs []error
	for _, p := range del {
		if err := m.h.RouteDel(rtDelRoute(p, m.opts.Table)); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s table %d: %w", p, m.opts.Table, err))
		}
	}
	if len(add) > 0 {
		link, err := m.h.LinkByName(m.opts.Link)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("find link %q: %w", m.opts.Link, err))...)
		}
		for _, p := range add {
			if err := m.h.RouteReplace(m.route(p, link.Attrs().Index)); err != nil {
				errs = append(errs, fmt.Errorf("add route %s dev %s table %d: %w", p, m.opts.Link, m.opts.Table, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ensureLink brings the link up and restores missing addresses.
func (m *RouteManager) ensureLink() (repaired bool, err error) {
	link, err := m.h.LinkByName(m.opts.Link)
	if err != nil {
		return false, fmt.Errorf("find link %q: %w", m.opts.Link, err)
	}
	var missing []netip.Prefix
	if len(m.opts.Addresses) > 0 {
		addrs, err := m.h.AddrList(link, vnl.FAMILY_ALL)
		if err != nil {
			return false, fmt.Errorf("list addresses of %q: %w", m.opts.Link, err)
		}
		var have []netip.Prefix
		for _, a := range addrs {
			if p, ok := Prefix(a.IPNet); ok {
				// Compare unmasked: an address is 10.0.0.1/24, not 10.0.0.0/24.
				addr, _ := netip.AddrFromSlice(a.IP)
				have = append(have, netip.PrefixFrom(addr.Unmap(), p.Bits()))
			}
		}
		for _, a := range m.opts.Addresses {
			if !slices.Contains(have, a) {
				missing = append(missing, a)
			}
		}
	}
	if link.Attrs().Flags&net.FlagUp != 0 && len(missing) == 0 {
		return false, nil
	}
	m.log.Warn("repairing link", "up", link.Attrs().Flags&net.FlagUp != 0, "missing_addresses", missing)
	return true, m.setupLink()
}

// ensureRoutes makes our table hold exactly the routes of reachable peers,
// on our link.
func (m *RouteManager) ensureRoutes() (repaired bool, err error) {
	link, err := m.h.LinkByName(m.opts.Link)
	if err != nil {
		return false, fmt.Errorf("find link %q: %w", m.opts.Link, err)
	}
	routes, err := m.h.RouteListFiltered(vnl.FAMILY_ALL, &vnl.Route{Table: m.opts.Table}, vnl.RT_FILTER_TABLE)
	if err != nil {
		return false, fmt.Errorf("list routes of table %d: %w", m.opts.Table, err)
	}
	want := m.wanted()
	var have, stray []netip.Prefix
	for _, r := range routes {
		p, ok := Prefix(r.Dst)
		if !ok {
			continue
		}
		if r.LinkIndex == link.Attrs().Index && r.Type == unix.RTN_UNICAST && len(r.MultiPath) == 0 {
			have = append(have, p)
		} else {
			stray = append(stray, p) // wrong device or type: replace it
		}
	}
	have, _ = rtNormalize(have)
	add, del := rtDiff(have, want)
	for _, p := range stray {
		if slices.Contains(want, p) {
			add = append(add, p) // RouteReplace overwrites it
		} else {
			del = append(del, p)
		}
	}
	if len(add) == 0 && len(del) == 0 {
		return false, nil
	}
	m.log.Warn("repairing routes", "missing", add, "unwanted", del)
	return true, m.apply(add, del)
}

// route builds our route for p.
func (m *RouteManager) route(p netip.Prefix, linkIndex int) *vnl.Route {
	return &vnl.Route{
		LinkIndex: linkIndex,
		Dst:       IPNet(p),
		Table:     m.opts.Table,
		Scope:     vnl.SCOPE_LINK,
		Protocol:  rtProtocol,
		Family:    Family(p),
		Type:      unix.RTN_UNICAST,
	}
}

// rtDelRoute selects the route to p in table whatever its device, scope,
// protocol and type: the kernel compares only the fields a delete sets, so
// the table is the relay's alone to clean, including routes others put
// there.
func rtDelRoute(p netip.Prefix, table int) *vnl.Route {
	return &vnl.Route{
		Dst:    IPNet(p),
		Table:  table,
		Scope:  vnl.SCOPE_NOWHERE, // "any scope" in a delete
		Family: Family(p),
	}
}
