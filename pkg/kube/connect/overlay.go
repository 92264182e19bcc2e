package connect

import (
	"fmt"
	"net/netip"
	"slices"
)

// allocate gives every id of ids without an overlay address the lowest
// free host address of pool, and keeps the ones already recorded: an
// address once given stays with its relay across restarts, leader changes
// and key rotations. It reports whether o changed.
func allocate(o *Overlay, pool netip.Prefix, ids ...string) (bool, error) {
	if o.Addrs == nil {
		o.Addrs = map[string]netip.Addr{}
	}
	used := map[netip.Addr]bool{}
	for _, a := range o.Addrs {
		used[a] = true
	}
	changed := false
	pool = pool.Masked()
	ids = slices.Clone(ids)
	slices.Sort(ids)
	for _, id := range ids {
		if a, ok := o.Addrs[id]; ok && pool.Contains(a) {
			continue
		}
		a, ok := free(pool, used)
		if !ok {
			return changed, fmt.Errorf("overlay pool %s is exhausted (%d relays)", pool, len(o.Addrs))
		}
		o.Addrs[id], used[a] = a, true
		changed = true
	}
	return changed, nil
}

// free returns the lowest host address of pool not in used, skipping the
// network address (and, for IPv4 pools wider than /31, the broadcast).
func free(pool netip.Prefix, used map[netip.Addr]bool) (netip.Addr, bool) {
	a := pool.Addr().Next()
	for ; a.IsValid() && pool.Contains(a); a = a.Next() {
		if a.Is4() && pool.Bits() < 31 && !pool.Contains(a.Next()) {
			break // broadcast
		}
		if !used[a] {
			return a, true
		}
	}
	return netip.Addr{}, false
}
