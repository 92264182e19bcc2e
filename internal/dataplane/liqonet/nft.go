package liqonet

import (
	"fmt"
	"net/netip"
	"slices"
)

// Priorities of the relay's chains (docs/liqo-addressing.md, §7).
const (
	// pinPriority runs just before Liqo's DNAT (dstnat, -100): a NAT
	// binding made here makes netfilter skip every later NAT chain of the
	// hook for the connection's whole life, both directions.
	pinPriority = -101
	// restorePriority copies the connection's mark to the packet before
	// routing, for every packet after the first (mangle, -150).
	restorePriority = -150
)

// addrRange is an inclusive range of IPv4 addresses, the unit of an nft
// interval set.
type addrRange struct{ first, last netip.Addr }

// ranges returns the IPv4 prefixes of ps as sorted, disjoint and
// non-adjacent ranges: what nft's auto-merge makes of an interval set's
// elements. The kernel refuses overlapping intervals, so the relay merges
// them itself.
func ranges(ps []netip.Prefix) []addrRange {
	var out []addrRange
	for _, p := range v4(ps) {
		r := addrRange{first: p.Addr(), last: lastAddr(p)}
		if n := len(out); n > 0 {
			prev := &out[n-1]
			// Overlapping or adjacent (an invalid Next is past
			// 255.255.255.255: everything after prev is inside it).
			if next := prev.last.Next(); !next.IsValid() || next.Compare(r.first) >= 0 {
				if r.last.Compare(prev.last) > 0 {
					prev.last = r.last
				}
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// lastAddr returns the last address of a masked IPv4 prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1 // a shift by 32 gives 0: /0 is all ones
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v |= host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// v4 returns the IPv4 prefixes of ps, masked, sorted and deduplicated.
func v4(ps []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range ps {
		if p.IsValid() && p.Addr().Is4() {
			out = append(out, p.Masked())
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(out)
}

// pin is what the nft table holds for one peer: the local sources it maps
// (its seesUs reals) and its prefixes while it is reachable (none while it
// is not). A connection is pinned only from a peer's mapped source to the
// same peer's prefix.
type pin struct {
	peer     string
	mapped   []netip.Prefix
	prefixes []netip.Prefix
}

// mappedSet and peersSet name a peer's nft sets: stable for the peer's
// life, readable in nft list.
func mappedSet(peer string) string { return "mapped_" + peer }
func peersSet(peer string) string  { return "peers_" + peer }

// maxPeerName bounds a peer name so that its set names fit the kernel's
// limit on nft names (NFT_NAME_MAXLEN, 256 bytes with the terminator).
const maxPeerName = 200

// checkPeerName reports a peer name that cannot be part of an nft set
// name as nft reads it back: letters, digits, '-', '_' and '.', at most
// maxPeerName bytes.
func checkPeerName(name string) error {
	if name == "" || len(name) > maxPeerName {
		return fmt.Errorf("liqo: peer name %q: must be 1 to %d bytes (it names the nft sets mapped_<name> and peers_<name>)", name, maxPeerName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("liqo: peer name %q: %q is not allowed in an nft set name (letters, digits, '-', '_', '.')", name, r)
		}
	}
	return nil
}
