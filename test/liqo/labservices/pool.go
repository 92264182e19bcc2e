package labservices

import (
	"fmt"
	"net/netip"
)

// Pool hands out addresses of an inclusive range, one per owner (a
// Service's namespace/name), and takes them back. It is not safe for
// concurrent use: the controller's single worker owns it.
type Pool struct {
	first, last netip.Addr
	byAddr      map[netip.Addr]string
	byOwner     map[string]netip.Addr
}

// ParseRange parses "FIRST-LAST" (IPv4 or IPv6, the same family, FIRST not
// after LAST).
func ParseRange(s string) (netip.Addr, netip.Addr, error) {
	for i := 0; i < len(s); i++ {
		if s[i] != '-' {
			continue
		}
		first, err := netip.ParseAddr(s[:i])
		if err != nil {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("address range %q: first address: %w", s, err)
		}
		last, err := netip.ParseAddr(s[i+1:])
		if err != nil {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("address range %q: last address: %w", s, err)
		}
		if first.Is4() != last.Is4() {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("address range %q: the two ends are of different families", s)
		}
		if last.Less(first) {
			return netip.Addr{}, netip.Addr{}, fmt.Errorf("address range %q: the last address is before the first", s)
		}
		return first, last, nil
	}
	return netip.Addr{}, netip.Addr{}, fmt.Errorf("address range %q: want FIRST-LAST", s)
}

// NewPool returns an empty pool of first..last.
func NewPool(first, last netip.Addr) *Pool {
	return &Pool{first: first, last: last, byAddr: map[netip.Addr]string{}, byOwner: map[string]netip.Addr{}}
}

// Contains reports whether a lies in the pool's range.
func (p *Pool) Contains(a netip.Addr) bool {
	return a.IsValid() && a.Is4() == p.first.Is4() && !a.Less(p.first) && !p.last.Less(a)
}

// Owned returns the address owner holds, if any.
func (p *Pool) Owned(owner string) (netip.Addr, bool) {
	a, ok := p.byOwner[owner]
	return a, ok
}

// Take gives owner the address want when it is valid (the Service asked for
// it, or held it before a restart), or the lowest free one otherwise. An
// owner keeps the address it has unless it asks for another.
func (p *Pool) Take(owner string, want netip.Addr) (netip.Addr, error) {
	if a, ok := p.byOwner[owner]; ok && (!want.IsValid() || a == want) {
		return a, nil
	}
	if want.IsValid() {
		if !p.Contains(want) {
			return netip.Addr{}, fmt.Errorf("address %s is outside the pool %s-%s", want, p.first, p.last)
		}
		if o, ok := p.byAddr[want]; ok && o != owner {
			return netip.Addr{}, fmt.Errorf("address %s is taken by %s", want, o)
		}
		p.Release(owner)
		p.byAddr[want], p.byOwner[owner] = owner, want
		return want, nil
	}
	for a := p.first; a.IsValid() && !p.last.Less(a); a = a.Next() {
		if _, used := p.byAddr[a]; !used {
			p.byAddr[a], p.byOwner[owner] = owner, a
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("the pool %s-%s is exhausted", p.first, p.last)
}

// Release gives back what owner holds; it returns the address, if any.
func (p *Pool) Release(owner string) (netip.Addr, bool) {
	a, ok := p.byOwner[owner]
	if ok {
		delete(p.byOwner, owner)
		delete(p.byAddr, a)
	}
	return a, ok
}
