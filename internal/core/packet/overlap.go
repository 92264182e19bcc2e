package packet

import (
	"cmp"
	"slices"
)

// firstOverlap finds two entries whose prefixes overlap, in O(n log n):
// the operator writes thousands of per-pod /32 mappings per peer, and a
// pairwise check of 8192 took over a second. Two prefixes overlap only
// when one contains the other; sorted by address, then shorter first, a
// prefix that contains others is followed at once by one of them, so
// comparing neighbours finds an overlap whenever there is one. It returns
// the indices into es of the pair, the lower index first.
func firstOverlap(es []Entry) (i, j int, ok bool) {
	order := make([]int, len(es))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int {
		pa, pb := es[a].Prefix, es[b].Prefix
		if c := pa.Addr().Compare(pb.Addr()); c != 0 {
			return c
		}
		return cmp.Compare(pa.Bits(), pb.Bits())
	})
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if es[a].Prefix.Overlaps(es[b].Prefix) {
			return min(a, b), max(a, b), true
		}
	}
	return 0, 0, false
}
