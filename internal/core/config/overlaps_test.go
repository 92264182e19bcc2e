package config

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// randomPrefix draws from a small space so that overlaps and duplicates
// are common: 10.0.0.0/8 split down to /12, and a few IPv6 ones.
func randomPrefix(r *rand.Rand) netip.Prefix {
	if r.IntN(8) == 0 {
		return netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfd, byte(r.IntN(2))}), 8+r.IntN(9)).Masked()
	}
	a := netip.AddrFrom4([4]byte{10, byte(r.IntN(16) << 4), 0, 0})
	return netip.PrefixFrom(a, 8+r.IntN(5)).Masked()
}

func randomSpans(r *rand.Rand) *Config {
	c := &Config{}
	for range r.IntN(3) {
		c.Exports = append(c.Exports, randomPrefix(r))
	}
	for range r.IntN(3) {
		p := randomPrefix(r)
		c.Addresses = append(c.Addresses, netip.PrefixFrom(p.Addr().Next(), 24))
	}
	for i := range 1 + r.IntN(5) {
		p := Peer{Name: fmt.Sprint("p", i)}
		for range 1 + r.IntN(4) {
			p.Prefixes = append(p.Prefixes, randomPrefix(r))
		}
		c.Peers = append(c.Peers, p)
	}
	return c
}

// naiveConflict is the reference: do a and b conflict?
func naiveConflict(a, b span) bool {
	switch {
	case a.owner < 0 && b.owner < 0, a.owner == b.owner:
		return false
	case a.owner == ownerAddress:
		return b.p.Contains(a.p.Addr())
	case b.owner == ownerAddress:
		return a.p.Contains(b.p.Addr())
	}
	return a.p.Overlaps(b.p)
}

// TestPeerConflictsAgainstNaive checks the sweep against every pair:
// each reported conflict is real, and each prefix that lies inside a
// conflicting one of another owner is reported.
func TestPeerConflictsAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		c := randomSpans(r)
		var all []span
		addAll := func(owner int, ps []netip.Prefix, single bool) {
			seen := map[netip.Prefix]bool{}
			for i, p := range ps {
				if single {
					p = netip.PrefixFrom(p.Addr(), p.Addr().BitLen())
				}
				if !seen[p] {
					seen[p] = true
					all = append(all, span{p, owner, i})
				}
			}
		}
		addAll(ownerAddress, c.Addresses, true)
		addAll(ownerExport, c.Exports, false)
		for i, p := range c.Peers {
			addAll(i, p.Prefixes, false)
		}
		got := c.peerConflicts()
		reported := map[span]bool{}
		for _, cf := range got {
			if !naiveConflict(cf.at, cf.other) {
				t.Fatalf("iter %d: reported %+v, which is no conflict", iter, cf)
			}
			if cf.at.owner < 0 {
				t.Fatalf("iter %d: reported at a local span: %+v", iter, cf)
			}
			reported[cf.at], reported[cf.other] = true, true
		}
		for _, a := range all {
			for _, b := range all {
				// b inside a: b must be reported.
				if naiveConflict(a, b) && a.p.Bits() <= b.p.Bits() && a.p.Contains(b.p.Addr()) && !reported[b] {
					if b.owner < 0 && a.owner < 0 {
						continue
					}
					t.Fatalf("iter %d: %+v inside %+v not reported; got %+v", iter, b, a, got)
				}
			}
		}
	}
}

func TestSelfOverlapsAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 3000 {
		var spans []span
		for i := range r.IntN(8) {
			spans = append(spans, span{p: randomPrefix(r), idx: i})
		}
		got := selfOverlaps(spans)
		reported := map[int]bool{}
		for _, cf := range got {
			if !cf.at.p.Overlaps(cf.other.p) || cf.at.idx <= cf.other.idx {
				t.Fatalf("iter %d: bad report %+v", iter, cf)
			}
			reported[cf.at.idx], reported[cf.other.idx] = true, true
		}
		for _, a := range spans {
			for _, b := range spans {
				if a.idx != b.idx && a.p.Overlaps(b.p) && (!reported[a.idx] || !reported[b.idx]) {
					t.Fatalf("iter %d: overlap of %+v and %+v not reported; got %+v", iter, a, b, got)
				}
			}
		}
	}
}

// TestAliasBombIsCheap checks that a small document repeating a big list
// through aliases neither hangs validation nor explodes memory: it is
// either refused as too large or checked in about n log n.
func TestAliasBombIsCheap(t *testing.T) {
	var b strings.Builder
	b.WriteString(expand(head))
	b.WriteString("x: &big [")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "10.%d.%d.0/24", 100+i/250, i%250)
	}
	b.WriteString("]\npeers:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  - {name: p%d, publicKey: %s, prefixes: *big, paths: [{name: d, endpoint: 'h:1'}]}\n",
			i, testKey(byte(i%250+1)))
	}
	start := time.Now()
	_, err := Parse([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Fatalf("Parse error = %.300v, want document too large", err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n > 3 {
		t.Errorf("%d error lines after the document was refused, want at most 3:\n%.500s", n, err)
	}
	// Not a timing assertion: a log line for whoever wonders.
	t.Logf("%d bytes, %d error lines, %v", b.Len(), strings.Count(err.Error(), "\n")+1, time.Since(start))
}
