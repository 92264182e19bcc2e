//go:build linux

package netlink

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// netlinkTimeout bounds every netlink request, so a wedged kernel call
// turns into an error the agent logs instead of a lock held forever (which
// would stall failover). Route and rule changes take microseconds; seconds
// only pass when something is badly wrong.
const netlinkTimeout = 5 * time.Second

// NewHandle opens a netlink handle for protocols (unix.NETLINK_ROUTE when
// none) in the current network namespace, with a timeout on its sockets.
// Every later call through the handle acts in that namespace, whatever
// thread it runs on.
func NewHandle(protocols ...int) (*vnl.Handle, error) {
	if len(protocols) == 0 {
		protocols = []int{unix.NETLINK_ROUTE}
	}
	h, err := vnl.NewHandle(protocols...)
	if err != nil {
		return nil, fmt.Errorf("open netlink handle: %w", err)
	}
	if err := h.SetSocketTimeout(netlinkTimeout); err != nil {
		h.Close()
		return nil, fmt.Errorf("set netlink timeout: %w", err)
	}
	return h, nil
}

// FlushTable deletes every route of table in family (vnl.FAMILY_ALL for
// both).
func FlushTable(h *vnl.Handle, family, table int) error {
	routes, err := h.RouteListFiltered(family, &vnl.Route{Table: table}, vnl.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list routes of table %d: %w", table, err)
	}
	var errs []error
	for i := range routes {
		if err := h.RouteDel(&routes[i]); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete route %s table %d: %w", routes[i].Dst, table, err))
		}
	}
	return errors.Join(errs...)
}

// IPNet converts a prefix to the net.IPNet netlink wants, 4-byte for IPv4.
// The address is not masked: 10.0.0.1/24 stays an address, not a network.
func IPNet(p netip.Prefix) *net.IPNet {
	addr := p.Addr().Unmap()
	bits := 128
	if addr.Is4() {
		bits = 32
	}
	return &net.IPNet{IP: net.IP(addr.AsSlice()), Mask: net.CIDRMask(p.Bits(), bits)}
}

// Prefix converts a netlink destination back to a masked prefix.
func Prefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	addr, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(addr.Unmap(), ones).Masked(), true
}

// Family returns the netlink address family of p.
func Family(p netip.Prefix) int {
	if p.Addr().Is6() {
		return vnl.FAMILY_V6
	}
	return vnl.FAMILY_V4
}

// FamilyName names an address family in messages.
func FamilyName(fam int) string {
	if fam == vnl.FAMILY_V6 {
		return "ipv6"
	}
	return "ipv4"
}
