package podrunner

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrPoolExhausted is returned by IPAM.Allocate when every address of the
// pod CIDR is taken.
var ErrPoolExhausted = errors.New("no free address in the pod CIDR")

// IPAM hands out the addresses of a node's pod CIDR. The network address,
// the first address (the bridge's) and, in IPv4, the broadcast address
// are never given out. It is not safe for concurrent use.
type IPAM struct {
	prefix netip.Prefix
	used   map[netip.Addr]string // address -> owner
}

// NewIPAM returns an allocator over prefix, which must hold at least one
// address besides the network, gateway and broadcast addresses.
func NewIPAM(prefix netip.Prefix) (*IPAM, error) {
	prefix = prefix.Masked()
	if !prefix.Addr().Is4() {
		return nil, fmt.Errorf("pod CIDR %s: only IPv4 is supported", prefix)
	}
	if prefix.Bits() > 29 {
		return nil, fmt.Errorf("pod CIDR %s is too small (at most /29)", prefix)
	}
	return &IPAM{prefix: prefix, used: map[netip.Addr]string{}}, nil
}

// Gateway is the bridge's address: the first one after the network address.
func (a *IPAM) Gateway() netip.Addr { return a.prefix.Addr().Next() }

// Prefix is the pod CIDR.
func (a *IPAM) Prefix() netip.Prefix { return a.prefix }

func (a *IPAM) usable(ip netip.Addr) bool {
	if !a.prefix.Contains(ip) || ip == a.prefix.Addr() || ip == a.Gateway() {
		return false
	}
	return a.prefix.Contains(ip.Next()) // not the broadcast address
}

// Allocate gives owner an address: the one it already holds, else want
// when want is usable and free, else the lowest free one.
func (a *IPAM) Allocate(owner string, want netip.Addr) (netip.Addr, error) {
	for ip, o := range a.used {
		if o == owner {
			return ip, nil
		}
	}
	if want.IsValid() && a.usable(want) {
		if _, taken := a.used[want]; !taken {
			a.used[want] = owner
			return want, nil
		}
	}
	for ip := a.Gateway().Next(); a.usable(ip); ip = ip.Next() {
		if _, taken := a.used[ip]; !taken {
			a.used[ip] = owner
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("%s: %w", a.prefix, ErrPoolExhausted)
}

// Release frees owner's address, if it holds one.
func (a *IPAM) Release(owner string) {
	for ip, o := range a.used {
		if o == owner {
			delete(a.used, ip)
		}
	}
}
