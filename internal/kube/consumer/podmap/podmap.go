// Package podmap computes the per-pod address mapping that lets two
// providers of a Liqo consumer reach each other's offloaded pods directly
// (docs/liqo-addressing.md, section 6). It is pure: the operator reads
// Liqo's objects, turns them into the values below and writes the result
// into the two RelayPeers.
//
// Every offloaded pod p has an address ext(p) in the consumer's external
// CIDR (an ipam.liqo.io IP object's status.ip). A provider X sees the
// consumer's external CIDR remapped (X's Configuration for the consumer,
// status.remote.cidr.external), so X's pods dial viewX(ext(p)). The
// consumer sees X's pod CIDRs remapped too (the consumer's Configuration
// for X: spec.remote.cidr.pod is X's real CIDR, status.remote.cidr.pod the
// consumer's view), so an IP object's spec.ip is the consumer's view of the
// pod and realX undoes it.
package podmap

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
)

// Remap is one CIDR as its owner declares it (Real) and as another cluster
// sees it (Seen): same length, host bits kept across.
type Remap struct {
	Real, Seen netip.Prefix
}

// Provider is what the mapping needs to know of one provider.
type Provider struct {
	// Name of the provider (its Liqo cluster ID), for messages.
	Name string
	// External is how this provider sees the consumer's external CIDR.
	External Remap
	// Pods are this provider's pod CIDRs as the consumer sees them.
	Pods []Remap
}

// Pod is one offloaded pod, from its IP object in the consumer.
type Pod struct {
	// Name is namespace/name, for messages and stable order.
	Name string
	// Consumer is the pod's address as the consumer sees it (spec.ip).
	Consumer netip.Addr
	// Ext is its address in the consumer's external CIDR (status.ip).
	Ext netip.Addr
}

// Mapping is a pair of one side's address and the other side's view, both
// /32 (or /128).
type Mapping struct {
	Real, As netip.Prefix
}

// Side is what one provider's RelayPeer for the other carries.
type Side struct {
	// Prefixes: the other side's pods, as this side's pods dial them.
	Prefixes []netip.Prefix
	// SeesUs: this side's pods, real address and the other side's view.
	SeesUs []Mapping
}

// Result is the mapping for both directions.
type Result struct {
	// A is A's RelayPeer for B; B is B's RelayPeer for A.
	A, B Side
	// Skipped lists the pods left out and why (not in either provider's
	// pod CIDRs, no external address yet, outside the external CIDR).
	Skipped []string
}

// Compute maps every pod of pods that lives in a or b. Pods are matched to
// a provider by their consumer-side address; a pod whose address is in
// neither provider is not theirs and is ignored silently.
func Compute(a, b Provider, pods []Pod) (Result, error) {
	if err := check(a); err != nil {
		return Result{}, err
	}
	if err := check(b); err != nil {
		return Result{}, err
	}
	var res Result
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(x, y Pod) int { return cmp.Compare(x.Name, y.Name) })
	for _, p := range pods {
		var home, other *Provider
		var homeSide, otherSide *Side
		switch {
		case owns(a, p.Consumer):
			home, other, homeSide, otherSide = &a, &b, &res.A, &res.B
		case owns(b, p.Consumer):
			home, other, homeSide, otherSide = &b, &a, &res.B, &res.A
		default:
			continue
		}
		if !p.Ext.IsValid() {
			res.Skipped = append(res.Skipped, p.Name+": no external address yet (IP status.ip empty)")
			continue
		}
		real, ok := realAddr(*home, p.Consumer)
		if !ok {
			continue
		}
		otherView, ok := remap(p.Ext, other.External)
		if !ok {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %s is outside the consumer's external CIDR", p.Name, p.Ext))
			continue
		}
		// The other side's pods dial otherView, so the other relay routes
		// it to this side; this side's relay translates its pod's real
		// address to that same view as the source of what it sends.
		otherSide.Prefixes = append(otherSide.Prefixes, host(otherView))
		homeSide.SeesUs = append(homeSide.SeesUs, Mapping{Real: host(real), As: host(otherView)})
	}
	return res, nil
}

func check(p Provider) error {
	if !p.External.Real.IsValid() || !p.External.Seen.IsValid() || p.External.Real.Bits() != p.External.Seen.Bits() {
		return fmt.Errorf("provider %s: external CIDR %s seen as %s: need two prefixes of the same length", p.Name, p.External.Real, p.External.Seen)
	}
	for i, r := range p.Pods {
		if !r.Real.IsValid() || !r.Seen.IsValid() || r.Real.Bits() != r.Seen.Bits() {
			return fmt.Errorf("provider %s: pod CIDR %d (%s seen as %s): need two prefixes of the same length", p.Name, i, r.Real, r.Seen)
		}
	}
	return nil
}

// owns reports whether the consumer-side address c is one of p's pods.
func owns(p Provider, c netip.Addr) bool {
	for _, r := range p.Pods {
		if r.Seen.Contains(c) {
			return true
		}
	}
	return false
}

// realAddr undoes the consumer's remapping of p's pod CIDR.
func realAddr(p Provider, c netip.Addr) (netip.Addr, bool) {
	for _, r := range p.Pods {
		if r.Seen.Contains(c) {
			return remapMask(c, r.Real), true
		}
	}
	return netip.Addr{}, false
}

// remap moves addr, inside r.Real, to the same host bits inside r.Seen.
func remap(addr netip.Addr, r Remap) (netip.Addr, bool) {
	if !r.Real.Contains(addr) {
		return netip.Addr{}, false
	}
	return remapMask(addr, r.Seen), true
}

// remapMask keeps addr's host bits under p's network bits.
func remapMask(addr netip.Addr, p netip.Prefix) netip.Addr {
	a := addr.As16()
	n := p.Masked().Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := range a {
		switch {
		case bits >= 8:
			a[i] = n[i]
			bits -= 8
		case bits > 0:
			m := byte(0xff << (8 - bits))
			a[i] = n[i]&m | a[i]&^m
			bits = 0
		}
	}
	out := netip.AddrFrom16(a)
	if addr.Is4() {
		out = out.Unmap()
	}
	return out
}

func host(a netip.Addr) netip.Prefix { return netip.PrefixFrom(a, a.BitLen()) }
