package packet

import (
	"net/netip"
	"strings"
	"testing"
)

// TestFirstOverlapMatchesPairwise compares firstOverlap with the pairwise
// check it replaced, on random sets where prefixes nest and overlap often.
func TestFirstOverlapMatchesPairwise(t *testing.T) {
	r := newRand(7)
	for round := range 3000 {
		es := make([]Entry, 1+r.IntN(12))
		for k := range es {
			es[k] = Entry{Prefix: randPrefix(r, r.IntN(2) == 0).Masked(), Peer: k}
		}
		want := false
		for a := range es {
			for b := range a {
				if es[a].Prefix.Overlaps(es[b].Prefix) {
					want = true
				}
			}
		}
		i, j, got := firstOverlap(es)
		if got != want {
			t.Fatalf("round %d: %v: firstOverlap says %v, pairwise %v", round, es, got, want)
		}
		if got && (i >= j || !es[i].Prefix.Overlaps(es[j].Prefix)) {
			t.Fatalf("round %d: %v: reported %d and %d, which do not overlap", round, es, i, j)
		}
	}
}

// TestTranslatorRefusesOverlapsAmongThousands: one overlapping /32 among
// 8192 per-pod mappings is found and named.
func TestTranslatorRefusesOverlapsAmongThousands(t *testing.T) {
	ms := hostMappings(8192)
	// Mapping 5000 becomes a /24 whose real holds the reals of mappings
	// 0..255; its as is a fresh /24.
	ms[5000] = Mapping{Real: netip.MustParsePrefix("10.244.0.0/24"), As: netip.MustParsePrefix("10.72.0.0/24")}
	_, err := NewTranslator(ms)
	if err == nil || !strings.Contains(err.Error(), "overlaps real") || !strings.Contains(err.Error(), "mapping 5000") {
		t.Fatalf("NewTranslator: %v", err)
	}
	ms = hostMappings(8192)
	ms[7].As = ms[8].As
	_, err = NewTranslator(ms)
	if err == nil || !strings.Contains(err.Error(), "as 10.71.0.8/32 overlaps as 10.71.0.8/32") {
		t.Fatalf("NewTranslator: %v", err)
	}
}
