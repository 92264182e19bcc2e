package liqonet

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
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

// tableScript renders an nft script that replaces the relay's table
// atomically (one transaction: add, delete, define), so it is idempotent and
// leaves no window without the pinning rules. peers are the /32s (or wider
// prefixes) of reachable peers, mapped the local sources the peers know
// (seesUs reals); only IPv4 prefixes are rendered.
func tableScript(o Options, peers, mapped []netip.Prefix) string {
	var b strings.Builder
	fmt.Fprintf(&b, "add table ip %s\ndelete table ip %s\n", o.NftTable, o.NftTable)
	fmt.Fprintf(&b, "table ip %s {\n", o.NftTable)
	writeSet(&b, "peers", peers)
	writeSet(&b, "mapped", mapped)
	fmt.Fprintf(&b, "\tchain restore {\n\t\ttype filter hook prerouting priority %d; policy accept;\n", restorePriority)
	fmt.Fprintf(&b, "\t\tct mark & %#x == %#x meta mark set meta mark | %#x\n\t}\n", o.Mark, o.Mark, o.Mark)
	fmt.Fprintf(&b, "\tchain pin {\n\t\ttype nat hook prerouting priority %d; policy accept;\n", pinPriority)
	fmt.Fprintf(&b, "\t\tiifname != %q iifname != %q ip saddr @mapped ip daddr @peers ct mark set ct mark | %#x meta mark set meta mark | %#x dnat to ip daddr\n",
		o.Tunnel, o.Link, o.Mark, o.Mark)
	fmt.Fprintf(&b, "\t\tiifname %q ct mark set ct mark | %#x dnat to ip daddr\n\t}\n}\n", o.Link, o.Mark)
	return b.String()
}

// writeSet renders a named interval set of IPv4 prefixes.
func writeSet(b *strings.Builder, name string, prefixes []netip.Prefix) {
	fmt.Fprintf(b, "\tset %s {\n\t\ttype ipv4_addr; flags interval; auto-merge;\n", name)
	var elems []string
	for _, p := range v4(prefixes) {
		elems = append(elems, p.String())
	}
	if len(elems) > 0 {
		fmt.Fprintf(b, "\t\telements = { %s }\n", strings.Join(elems, ", "))
	}
	b.WriteString("\t}\n")
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
