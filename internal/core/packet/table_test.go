package packet

import (
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// naiveTable is the deliberately simple reference: a linear scan keeping the
// longest matching prefix.
type naiveTable []Entry

func (n naiveTable) lookup(a netip.Addr) (int, bool) {
	best, peer := -1, 0
	for _, e := range n {
		if e.Prefix.Contains(a) && e.Prefix.Bits() > best {
			best, peer = e.Prefix.Bits(), e.Peer
		}
	}
	return peer, best >= 0
}

func randPrefix(r *rand.Rand, v4 bool) netip.Prefix {
	var a netip.Addr
	var bits int
	if v4 {
		var b [4]byte
		fillRand(r, b[:])
		// Cluster the addresses so that prefixes nest and overlap often.
		b[0] = 10 + byte(r.IntN(3))
		a, bits = netip.AddrFrom4(b), r.IntN(33)
	} else {
		var b [16]byte
		fillRand(r, b[:])
		b[0], b[1] = 0xfd, byte(r.IntN(3))
		a, bits = netip.AddrFrom16(b), r.IntN(129)
	}
	return netip.PrefixFrom(a, bits).Masked()
}

// randProbe returns an address near the table's prefixes: a prefix's first
// or last address, one just outside, or random bits inside.
func randProbe(r *rand.Rand, entries []Entry, v4 bool) netip.Addr {
	if len(entries) == 0 || r.IntN(5) == 0 {
		return randPrefix(r, v4).Addr()
	}
	p := entries[r.IntN(len(entries))].Prefix
	if p.Addr().Is4() != v4 {
		return randPrefix(r, v4).Addr()
	}
	first := p.Addr()
	last := randIn(r, p)
	switch r.IntN(4) {
	case 0:
		return first
	case 1:
		if prev := first.Prev(); prev.IsValid() {
			return prev
		}
		return first
	case 2:
		// last address of p
		b := first.AsSlice()
		for i := range b {
			bit := i * 8
			switch {
			case bit >= p.Bits():
				b[i] = 0xff
			case bit+8 > p.Bits():
				b[i] |= 0xff >> (p.Bits() - bit)
			}
		}
		a, _ := netip.AddrFromSlice(b)
		if r.IntN(2) == 0 {
			if next := a.Next(); next.IsValid() {
				return next
			}
		}
		return a
	}
	return last
}

func TestTableRandomAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	for round := 0; round < 200; round++ {
		n := r.IntN(60)
		var entries []Entry
		seen := map[netip.Prefix]bool{}
		for len(entries) < n {
			p := randPrefix(r, r.IntN(2) == 0)
			if seen[p] {
				continue
			}
			seen[p] = true
			entries = append(entries, Entry{Prefix: p, Peer: r.IntN(5)})
		}
		tbl, err := NewTable(entries)
		if err != nil {
			t.Fatal(err)
		}
		ref := naiveTable(entries)
		for i := 0; i < 2000; i++ {
			a := randProbe(r, entries, r.IntN(2) == 0)
			wp, wok := ref.lookup(a)
			gp, gok := tbl.Lookup(a)
			bp, bok := tbl.LookupBytes(a.AsSlice())
			if gp != wp || gok != wok || bp != wp || bok != wok {
				t.Fatalf("round %d: lookup %v = (%d,%v), bytes (%d,%v), want (%d,%v); entries %v",
					round, a, gp, gok, bp, bok, wp, wok, entries)
			}
		}
	}
}

func TestTableEdges(t *testing.T) {
	pp := netip.MustParsePrefix
	tbl, err := NewTable([]Entry{
		{pp("0.0.0.0/0"), 1},
		{pp("255.255.255.255/32"), 2},
		{pp("10.0.0.0/8"), 3},
		{pp("10.1.2.3/32"), 4},
		{pp("::/0"), 5},
		{pp("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128"), 6},
		{pp("fd00::/8"), 7},
		{pp("fd00::1:0:0:0/80"), 8}, // masks across the 64-bit halves
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		peer int
	}{
		{"0.0.0.0", 1}, {"255.255.255.255", 2}, {"255.255.255.254", 1}, {"10.255.255.255", 3},
		{"11.0.0.0", 1}, {"9.255.255.255", 1}, {"10.1.2.3", 4}, {"10.1.2.4", 3},
		{"::", 5}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 6}, {"fd00::1:0:0:1", 8},
		{"fd00::2:0:0:0", 7}, {"fd00::1:ffff:ffff:ffff", 8}, {"fe00::", 5},
	} {
		a := netip.MustParseAddr(tc.addr)
		if p, ok := tbl.Lookup(a); !ok || p != tc.peer {
			t.Errorf("Lookup(%v) = %d,%v, want %d", a, p, ok, tc.peer)
		}
	}
	empty, _ := NewTable(nil)
	if _, ok := empty.Lookup(netip.MustParseAddr("1.2.3.4")); ok {
		t.Error("empty table found an address")
	}
	if _, ok := tbl.LookupBytes([]byte{1, 2, 3}); ok {
		t.Error("3-byte address found")
	}
	if _, ok := tbl.Lookup(netip.Addr{}); ok {
		t.Error("zero Addr found")
	}
}

func TestNewTableErrors(t *testing.T) {
	pp := netip.MustParsePrefix
	for _, tc := range []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"duplicate", []Entry{{pp("10.0.0.0/8"), 0}, {pp("10.1.0.0/8"), 1}}, "duplicate prefix 10.0.0.0/8"},
		{"invalid", []Entry{{netip.Prefix{}, 0}}, "invalid prefix"},
		{"negative peer", []Entry{{pp("10.0.0.0/8"), -1}}, "out of range"},
		{"mapped", []Entry{{pp("::ffff:10.0.0.0/104"), 0}}, "IPv4-mapped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(tc.entries)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSet(t *testing.T) {
	pp := netip.MustParsePrefix
	s := NewSet([]netip.Prefix{pp("10.244.0.0/16"), pp("10.244.0.0/16"), pp("10.0.0.1/32"), pp("fd00::/64"), {}})
	for _, tc := range []struct {
		addr string
		in   bool
	}{{"10.244.1.1", true}, {"10.245.0.0", false}, {"10.0.0.1", true}, {"10.0.0.2", false}, {"fd00::5", true}, {"fd00:0:0:1::", false}} {
		a := netip.MustParseAddr(tc.addr)
		if s.Contains(a) != tc.in || s.ContainsBytes(a.AsSlice()) != tc.in {
			t.Errorf("Contains(%v) != %v", a, tc.in)
		}
	}
	if NewSet(nil).Contains(netip.MustParseAddr("1.1.1.1")) {
		t.Error("empty set contains an address")
	}
}

func benchTable(b *testing.B, n int) (*Table, [][]byte) {
	r := rand.New(rand.NewPCG(9, 9))
	var entries []Entry
	seen := map[netip.Prefix]bool{}
	for len(entries) < n {
		p := randPrefix(r, len(entries)%2 == 0)
		if !seen[p] {
			seen[p] = true
			entries = append(entries, Entry{Prefix: p, Peer: len(entries)})
		}
	}
	tbl, err := NewTable(entries)
	if err != nil {
		b.Fatal(err)
	}
	probes := make([][]byte, 1024)
	for i := range probes {
		probes[i] = randProbe(r, entries, i%2 == 0).AsSlice()
	}
	return tbl, probes
}

func BenchmarkTableLookupBytes(b *testing.B) {
	for _, n := range []int{8, 1000} {
		b.Run(strconv.Itoa(n)+"prefixes", func(b *testing.B) {
			tbl, probes := benchTable(b, n)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				tbl.LookupBytes(probes[i&1023])
			}
		})
	}
}
