package packet

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
)

// Entry assigns a prefix to a peer index in a Table.
type Entry struct {
	Prefix netip.Prefix
	Peer   int
}

// Table is an immutable longest-prefix-match table for IPv4 and IPv6.
//
// It is built once from its entries and is then safe for concurrent use.
// Internally every family is flattened into sorted, non-overlapping address
// intervals, each carrying the peer of the longest prefix covering it, so a
// lookup is one binary search over a small slice and never allocates.
type Table struct {
	v4 table4
	v6 table6
}

// noPeer marks an interval that no prefix covers.
const noPeer = -1

// maxPeer is the largest peer index a Table accepts (indexes are stored as int32).
const maxPeer = 1<<31 - 1

// NewTable builds a Table. It fails on an invalid prefix, a negative or too
// large peer index, or the same (masked) prefix appearing twice.
func NewTable(entries []Entry) (*Table, error) {
	var e4 []entry4
	var e6 []entry6
	seen := make(map[netip.Prefix]struct{}, len(entries))
	for i, e := range entries {
		if !e.Prefix.IsValid() {
			return nil, fmt.Errorf("router: table entry %d: invalid prefix %v", i, e.Prefix)
		}
		if e.Peer < 0 || e.Peer > maxPeer {
			return nil, fmt.Errorf("router: table entry %d (%v): peer index %d out of range", i, e.Prefix, e.Peer)
		}
		p := e.Prefix.Masked()
		if p.Addr().Is4In6() {
			return nil, fmt.Errorf("router: table entry %d: IPv4-mapped IPv6 prefix %v not supported", i, e.Prefix)
		}
		if _, dup := seen[p]; dup {
			return nil, fmt.Errorf("router: table entry %d: duplicate prefix %v", i, p)
		}
		seen[p] = struct{}{}
		if p.Addr().Is4() {
			e4 = append(e4, entry4{addr: addr4(p.Addr()), bits: p.Bits(), peer: int32(e.Peer)})
		} else {
			e6 = append(e6, entry6{addr: addr6(p.Addr()), bits: p.Bits(), peer: int32(e.Peer)})
		}
	}
	return &Table{v4: build4(e4), v6: build6(e6)}, nil
}

// Lookup returns the peer of the longest prefix containing a.
func (t *Table) Lookup(a netip.Addr) (peer int, ok bool) {
	if a.Is4() {
		return t.v4.lookup(addr4(a))
	}
	if a.Is6() && !a.Is4In6() {
		return t.v6.lookup(addr6(a))
	}
	return 0, false
}

// LookupBytes is Lookup for an address given as 4 or 16 raw bytes, as it
// appears in a packet header. Any other length finds nothing.
func (t *Table) LookupBytes(ip []byte) (peer int, ok bool) {
	switch len(ip) {
	case 4:
		return t.v4.lookup(binary.BigEndian.Uint32(ip))
	case 16:
		return t.v6.lookup(u128{binary.BigEndian.Uint64(ip), binary.BigEndian.Uint64(ip[8:])})
	}
	return 0, false
}

// Set is an immutable set of prefixes answering membership of addresses.
type Set struct {
	t *Table
}

// NewSet builds a Set. Invalid prefixes are ignored and duplicates merged.
func NewSet(p []netip.Prefix) *Set {
	seen := make(map[netip.Prefix]struct{}, len(p))
	entries := make([]Entry, 0, len(p))
	for _, q := range p {
		if !q.IsValid() || q.Addr().Is4In6() {
			continue
		}
		q = q.Masked()
		if _, dup := seen[q]; dup {
			continue
		}
		seen[q] = struct{}{}
		entries = append(entries, Entry{Prefix: q})
	}
	t, err := NewTable(entries)
	if err != nil {
		panic("router: NewSet: " + err.Error()) // impossible: entries are valid and unique
	}
	return &Set{t: t}
}

// Contains reports whether a lies in one of the set's prefixes.
func (s *Set) Contains(a netip.Addr) bool {
	_, ok := s.t.Lookup(a)
	return ok
}

// ContainsBytes is Contains for a 4- or 16-byte raw address.
func (s *Set) ContainsBytes(ip []byte) bool {
	_, ok := s.t.LookupBytes(ip)
	return ok
}

// --- IPv4 ---

type entry4 struct {
	addr uint32
	bits int
	peer int32
}

// table4 maps the interval [starts[i], starts[i+1]) to peers[i].
type table4 struct {
	starts []uint32
	peers  []int32
}

func addr4(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func mask4(bits int) uint32 {
	if bits == 0 {
		return 0
	}
	return ^uint32(0) << (32 - bits)
}

func build4(es []entry4) table4 {
	if len(es) == 0 {
		return table4{}
	}
	// Exact-match maps per prefix length, longest first, to resolve the
	// longest match of each interval start at build time.
	byLen := map[int]map[uint32]int32{}
	for _, e := range es {
		if byLen[e.bits] == nil {
			byLen[e.bits] = map[uint32]int32{}
		}
		byLen[e.bits][e.addr] = e.peer
	}
	lens := make([]int, 0, len(byLen))
	for l := range byLen {
		lens = append(lens, l)
	}
	slices.Sort(lens)
	slices.Reverse(lens)
	lpm := func(a uint32) int32 {
		for _, l := range lens {
			if p, ok := byLen[l][a&mask4(l)]; ok {
				return p
			}
		}
		return noPeer
	}

	bounds := []uint32{0}
	for _, e := range es {
		bounds = append(bounds, e.addr)
		if end := e.addr | ^mask4(e.bits); end != ^uint32(0) {
			bounds = append(bounds, end+1)
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var t table4
	for _, b := range bounds {
		p := lpm(b)
		if n := len(t.peers); n > 0 && t.peers[n-1] == p {
			continue
		}
		t.starts = append(t.starts, b)
		t.peers = append(t.peers, p)
	}
	return t
}

func (t *table4) lookup(a uint32) (int, bool) {
	s := t.starts
	if len(s) == 0 {
		return 0, false
	}
	// Find the last start <= a; starts[0] == 0 so it exists.
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if s[m] <= a {
			lo = m
		} else {
			hi = m
		}
	}
	if p := t.peers[lo]; p != noPeer {
		return int(p), true
	}
	return 0, false
}

// --- IPv6 ---

type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

func (a u128) and(b u128) u128 { return u128{a.hi & b.hi, a.lo & b.lo} }

func (a u128) or(b u128) u128 { return u128{a.hi | b.hi, a.lo | b.lo} }

func (a u128) not() u128 { return u128{^a.hi, ^a.lo} }

func (a u128) inc() u128 {
	lo := a.lo + 1
	hi := a.hi
	if lo == 0 {
		hi++
	}
	return u128{hi, lo}
}

var allOnes128 = u128{^uint64(0), ^uint64(0)}

func addr6(a netip.Addr) u128 {
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func mask6(bits int) u128 {
	switch {
	case bits == 0:
		return u128{}
	case bits <= 64:
		return u128{^uint64(0) << (64 - bits), 0}
	case bits == 128:
		return allOnes128
	default:
		return u128{^uint64(0), ^uint64(0) << (128 - bits)}
	}
}

type entry6 struct {
	addr u128
	bits int
	peer int32
}

type table6 struct {
	starts []u128
	peers  []int32
}

func build6(es []entry6) table6 {
	if len(es) == 0 {
		return table6{}
	}
	byLen := map[int]map[u128]int32{}
	for _, e := range es {
		if byLen[e.bits] == nil {
			byLen[e.bits] = map[u128]int32{}
		}
		byLen[e.bits][e.addr] = e.peer
	}
	lens := make([]int, 0, len(byLen))
	for l := range byLen {
		lens = append(lens, l)
	}
	slices.Sort(lens)
	slices.Reverse(lens)
	lpm := func(a u128) int32 {
		for _, l := range lens {
			if p, ok := byLen[l][a.and(mask6(l))]; ok {
				return p
			}
		}
		return noPeer
	}

	bounds := []u128{{}}
	for _, e := range es {
		bounds = append(bounds, e.addr)
		if end := e.addr.or(mask6(e.bits).not()); end != allOnes128 {
			bounds = append(bounds, end.inc())
		}
	}
	slices.SortFunc(bounds, func(a, b u128) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	bounds = slices.Compact(bounds)
	var t table6
	for _, b := range bounds {
		p := lpm(b)
		if n := len(t.peers); n > 0 && t.peers[n-1] == p {
			continue
		}
		t.starts = append(t.starts, b)
		t.peers = append(t.peers, p)
	}
	return t
}

func (t *table6) lookup(a u128) (int, bool) {
	s := t.starts
	if len(s) == 0 {
		return 0, false
	}
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if !a.less(s[m]) {
			lo = m
		} else {
			hi = m
		}
	}
	if p := t.peers[lo]; p != noPeer {
		return int(p), true
	}
	return 0, false
}
