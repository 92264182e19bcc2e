package config

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// Finding overlaps among n prefixes pair by pair costs n², which a
// configuration that repeats a big list through YAML aliases can turn into
// hours. Two prefixes overlap only if one contains the other, so we sort
// them by address and then by length (containers first) and sweep with a
// stack of the prefixes that contain the current one: O(n log n), plus a
// bounded walk of the stack per prefix.

// Owners of spans that are not peers.
const (
	ownerAddress = -2 // one of our addresses, as a single-address prefix
	ownerExport  = -1 // one of our exports
)

// span is a prefix with where it came from.
type span struct {
	p     netip.Prefix
	owner int // peer index, ownerAddress or ownerExport
	idx   int // index in the owner's list
}

// conflict is an overlap to report at span at, naming span other.
type conflict struct{ at, other span }

func compareSpans(a, b span) int {
	if c := a.p.Addr().Compare(b.p.Addr()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.p.Bits(), b.p.Bits()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.owner, b.owner); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// docOrder orders spans as they appear in the document: ours first, then
// peer by peer.
func docOrder(a, b span) int {
	if c := cmp.Compare(a.owner, b.owner); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// popTo drops from the top of the stack the spans that do not contain x.
// Each span of the stack contains the one above it, so the rest do.
func popTo(stack []span, x netip.Prefix) []span {
	for len(stack) > 0 && !stack[len(stack)-1].p.Contains(x.Addr()) {
		stack = stack[:len(stack)-1]
	}
	return stack
}

// maxLocalReports bounds how many peer prefixes containing one of our
// exports or addresses are reported for it.
const maxLocalReports = 8

// peerConflicts finds the peer prefixes that overlap another peer's
// prefixes or our exports, or that contain one of our addresses. Each
// prefix contained in a conflicting one is reported with its nearest
// container of another owner; a peer-peer conflict is reported at the peer
// that comes later in the document. Invalid prefixes, prefixes with host
// bits and duplicates within a list are skipped: they are reported
// elsewhere.
func (c *Config) peerConflicts() []conflict {
	var spans []span
	add := func(owner int, ps []netip.Prefix, single bool) {
		seen := make(map[netip.Prefix]bool, len(ps))
		for i, p := range ps {
			if !p.IsValid() {
				continue
			}
			if single {
				p = netip.PrefixFrom(p.Addr(), p.Addr().BitLen())
			} else if p != p.Masked() {
				continue
			}
			if !seen[p] {
				seen[p] = true
				spans = append(spans, span{p: p, owner: owner, idx: i})
			}
		}
	}
	add(ownerAddress, c.Addresses, true)
	add(ownerExport, c.Exports, false)
	for i, p := range c.Peers {
		add(i, p.Prefixes, false)
	}
	slices.SortFunc(spans, compareSpans)

	var out []conflict
	var locals, peers []span // each a chain of containers of the current span
	for _, x := range spans {
		locals, peers = popTo(locals, x.p), popTo(peers, x.p)
		if x.owner < 0 {
			for j, n := len(peers)-1, 0; j >= 0 && n < maxLocalReports; j, n = j-1, n+1 {
				out = append(out, conflict{at: peers[j], other: x})
			}
			locals = append(locals, x)
			continue
		}
		if len(locals) > 0 {
			out = append(out, conflict{at: x, other: locals[len(locals)-1]})
		}
		// Spans of x's own peer above the first other peer's are distinct
		// nested prefixes, so this walk is at most 129 steps.
		for j := len(peers) - 1; j >= 0; j-- {
			if o := peers[j]; o.owner != x.owner {
				if docOrder(x, o) < 0 {
					out = append(out, conflict{at: o, other: x})
				} else {
					out = append(out, conflict{at: x, other: o})
				}
				break
			}
		}
		peers = append(peers, x)
	}
	slices.SortFunc(out, func(a, b conflict) int {
		if c := docOrder(a.at, b.at); c != 0 {
			return c
		}
		return docOrder(a.other, b.other)
	})
	return out
}

// selfOverlaps finds overlapping prefixes in one list (spans with idx set,
// all valid and canonical). Each prefix contained in another is reported
// with its nearest container, at the one that comes later in the list.
func selfOverlaps(spans []span) []conflict {
	spans = slices.Clone(spans)
	slices.SortFunc(spans, compareSpans)
	var out []conflict
	var stack []span
	for _, x := range spans {
		stack = popTo(stack, x.p)
		if len(stack) > 0 {
			if o := stack[len(stack)-1]; x.idx < o.idx {
				out = append(out, conflict{at: o, other: x})
			} else {
				out = append(out, conflict{at: x, other: o})
			}
		}
		stack = append(stack, x)
	}
	slices.SortFunc(out, func(a, b conflict) int {
		if c := cmp.Compare(a.at.idx, b.at.idx); c != 0 {
			return c
		}
		return cmp.Compare(a.other.idx, b.other.idx)
	})
	return out
}

// reportPeerConflicts records the conflicts found by peerConflicts.
func (c *Config) reportPeerConflicts(e *errList) {
	for _, cf := range c.peerConflicts() {
		at, o := cf.at, cf.other
		path := index(field(index("peers", at.owner), "prefixes"), at.idx)
		var msg string
		switch o.owner {
		case ownerExport:
			msg = fmt.Sprintf("%s overlaps exports[%d] %s (ambiguous routing; translate with seesUs on the other side)", at.p, o.idx, o.p)
		case ownerAddress:
			msg = fmt.Sprintf("%s contains our own address addresses[%d] %s", at.p, o.idx, o.p.Addr())
		default:
			msg = fmt.Sprintf("%s of peer %q overlaps %s of peer %q (peers[%d].prefixes[%d])",
				at.p, c.Peers[at.owner].Name, o.p, c.Peers[o.owner].Name, o.owner, o.idx)
		}
		e.checkf(path, msg)
	}
}
