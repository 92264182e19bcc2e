package podmap

import "net/netip"

// Map moves a, inside r.Real, to the same host bits inside r.Seen: how the
// cluster of r.Seen sees address a. It reports false when a is outside
// r.Real.
func (r Remap) Map(a netip.Addr) (netip.Addr, bool) { return remap(a, r) }
