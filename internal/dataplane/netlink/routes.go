package netlink

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
)

// Sentinel errors of the route manager. Callers match them with errors.Is.
var (
	// ErrRoutesClosed is returned by RouteManager methods after Close.
	ErrRoutesClosed = errors.New("route manager closed")
	// ErrRoutePrefixConflict is returned by SetPeer when a prefix is
	// already claimed by another peer: two peers cannot share a route in
	// one table, and silently letting the last writer win would make
	// withdrawing one peer delete the other's route.
	ErrRoutePrefixConflict = errors.New("prefix already claimed by another peer")
	// ErrRuleShadowed is returned by EnsureRules when a foreign rule that
	// shadows our table sits at a priority we cannot get ahead of (1 or
	// less: priority 0 belongs to the kernel's local table rule).
	ErrRuleShadowed = errors.New("policy rule shadowed and cannot be moved ahead")
	// ErrStaleLinkNotTUN is returned by CleanupStale when a link with the
	// relay's interface name exists but is not a TUN device: it is someone
	// else's interface and is left alone.
	ErrStaleLinkNotTUN = errors.New("existing link with the relay's name is not a TUN device")
	// ErrRoutesUnsupported is returned by the route manager and
	// CleanupStale on platforms other than Linux.
	ErrRoutesUnsupported = errors.New("routes and policy rules are only supported on Linux")
)

// Limits of the relay's tables, rules and links, for RouteOptions and the
// Liqo integration's options. The reserved tables and the priority range
// follow iproute2 conventions.
const (
	// TableDefault, TableMain and TableLocal are the kernel's own tables:
	// a table of the relay must never be one of them, because the relay
	// flushes its tables and owns their routes.
	TableDefault = 253
	TableMain    = 254
	TableLocal   = 255
	// MaxPriority is the highest priority the relay's rules may use: they
	// must come before the "from all lookup main" rule at 32766, otherwise
	// the host's routes (Liqo's consumer path) would always win.
	MaxPriority = 32765
	// MinPriority is the lowest: 0 is the kernel's local-table rule.
	MinPriority = 1
	// MaxLinkName is IFNAMSIZ minus the terminating NUL.
	MaxLinkName = 15
)

// RouteOptions configures a RouteManager and CleanupStale.
type RouteOptions struct {
	// Link is the name of the relay's interface (the TUN device).
	Link string
	// Addresses are the relay's own overlay addresses, set on the link.
	Addresses []netip.Prefix
	// MTU of the link; 0 leaves it as the device was created.
	MTU int
	// Table is the routing table holding peer prefixes. It is dedicated to
	// the relay: CleanupStale flushes it. Must not be 0, 253, 254 or 255.
	Table int
	// Priority of our policy rules, in [1, 32765] so they come before the
	// main table. EnsureRules may move a rule to a lower number to stay
	// ahead of a shadowing foreign rule (see EnsureRules).
	Priority int
	// FwMark is the mark carried by the relay's own UDP sockets. Marked
	// traffic is excluded from our table ("not fwmark FwMark lookup
	// Table", as wg-quick does), so the relay's own packets never loop into
	// the TUN even when a peer prefix covers a path endpoint. Must not be 0.
	FwMark uint32
	// Logger receives repairs and withdrawals; nil discards.
	Logger *slog.Logger
}

// Validate returns every problem of the options, joined.
func (o RouteOptions) Validate() error {
	var errs []error
	switch {
	case o.Link == "":
		errs = append(errs, errors.New("link: must not be empty"))
	case len(o.Link) > MaxLinkName:
		errs = append(errs, fmt.Errorf("link: %q is longer than %d bytes", o.Link, MaxLinkName))
	}
	for i, a := range o.Addresses {
		if !a.IsValid() {
			errs = append(errs, fmt.Errorf("addresses[%d]: invalid prefix", i))
		}
	}
	if o.MTU != 0 && (o.MTU < 68 || o.MTU > 65535) {
		errs = append(errs, fmt.Errorf("mtu: %d outside [68, 65535] (0 keeps the device's)", o.MTU))
	}
	switch o.Table {
	case 0, TableDefault, TableMain, TableLocal:
		errs = append(errs, fmt.Errorf("table: %d is unset or reserved by the kernel", o.Table))
	default:
		if o.Table < 0 {
			errs = append(errs, fmt.Errorf("table: %d is negative", o.Table))
		}
	}
	if o.Priority < MinPriority || o.Priority > MaxPriority {
		errs = append(errs, fmt.Errorf("priority: %d outside [%d, %d]", o.Priority, MinPriority, MaxPriority))
	}
	if o.FwMark == 0 {
		errs = append(errs, errors.New("fwmark: must not be 0 (the relay's own traffic must be excluded from its table)"))
	}
	return errors.Join(errs...)
}

// rtNormalize masks, sorts and deduplicates prefixes and rejects invalid
// ones, so that a peer's prefix list can be compared and diffed.
func rtNormalize(prefixes []netip.Prefix) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(prefixes))
	for i, p := range prefixes {
		if !p.IsValid() {
			return nil, fmt.Errorf("prefix %d: invalid", i)
		}
		out = append(out, p.Masked())
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(out), nil
}

// rtDiff returns the prefixes of want missing from have (to add) and the
// prefixes of have missing from want (to delete). Both inputs are
// normalized.
func rtDiff(have, want []netip.Prefix) (add, del []netip.Prefix) {
	for _, p := range want {
		if !slices.Contains(have, p) {
			add = append(add, p)
		}
	}
	for _, p := range have {
		if !slices.Contains(want, p) {
			del = append(del, p)
		}
	}
	return add, del
}

// rtOverlapsAny reports whether p overlaps any of set.
func rtOverlapsAny(p netip.Prefix, set []netip.Prefix) bool {
	for _, q := range set {
		if p.Overlaps(q) {
			return true
		}
	}
	return false
}
