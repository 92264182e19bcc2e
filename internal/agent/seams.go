package agent

import "net/netip"

// wgDevice is the part of wireguard-go's device the agent configures and
// reads at run time (its UAPI). *device.Device implements it; tests wrap it
// to inject failures.
type wgDevice interface {
	IpcSet(uapi string) error
	IpcGet() (string, error)
}

// routeTable is the kernel routing state of a TUN relay. *netlink.RouteManager
// implements it; a netstack relay has none (nil). SetPeer refuses a prefix
// that another peer holds and, when a netlink call fails, still records the
// peer's new state (EnsureRules converges to it later).
type routeTable interface {
	SetPeer(name string, prefixes []netip.Prefix, reachable bool) error
	RemovePeer(name string) error
	EnsureRules() (repaired bool, err error)
	Close() error
}
