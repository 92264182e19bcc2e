package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults of the netstack settings. The memory figures are what one unit
// costs the relay at most, so that a full table stays within tens of MB.
const (
	// DefaultUDPMaxFlows caps the forwarded UDP flows (one per peer
	// 4-tuple to an exported destination). Each holds a host socket and up
	// to 128 KiB of buffers: 1024 flows are at most about 130 MB.
	DefaultUDPMaxFlows = 1024
	// DefaultUDPIdleTimeout closes a forwarded UDP flow after this long
	// without a datagram either way, like a NAT's UDP timeout.
	DefaultUDPIdleTimeout = 60 * time.Second
	// DefaultSOCKS5MaxConns caps the SOCKS5 proxy's concurrent client
	// connections; each CONNECT holds a mesh connection and 64 KiB of
	// copy buffers.
	DefaultSOCKS5MaxConns = 256
	// DefaultSOCKS5MaxUDPAssociations caps the concurrent UDP ASSOCIATE
	// requests; each holds a host UDP port, up to two mesh sockets and 192
	// KiB of buffers. Each is also a connection, so SOCKS5MaxConns caps
	// them too.
	DefaultSOCKS5MaxUDPAssociations = 64
	// MaxUDPMaxFlows and MaxSOCKS5MaxConns bound the caps themselves, so
	// that a typo cannot remove them.
	MaxUDPMaxFlows    = 1 << 20
	MaxSOCKS5MaxConns = 1 << 16
	// MinUDPIdleTimeout keeps the reaper, which runs every quarter of the
	// timeout, from spinning.
	MinUDPIdleTimeout = time.Second
)

// DefaultNetstack returns the netstack defaults: no SOCKS5 proxy, and the
// caps above.
func DefaultNetstack() Netstack {
	return Netstack{
		UDPMaxFlows:              DefaultUDPMaxFlows,
		UDPIdleTimeout:           DefaultUDPIdleTimeout,
		SOCKS5MaxConns:           DefaultSOCKS5MaxConns,
		SOCKS5MaxUDPAssociations: DefaultSOCKS5MaxUDPAssociations,
	}
}

var netstackFields = []string{
	"socks5", "socks5AuthFile", "socks5MaxConns", "socks5MaxUDPAssociations",
	"udpMaxFlows", "udpIdleTimeout",
}

// netstack applies the fields present in n on top of *ns.
func (d *decoder) netstack(n *yaml.Node, ns *Netstack) {
	const p = "netstack"
	t := d.fields(n, p, netstackFields...)
	if t == nil {
		return
	}
	d.setString(t, p, "socks5", &ns.SOCKS5)
	d.setString(t, p, "socks5AuthFile", &ns.SOCKS5AuthFile)
	d.setInt(t, p, "socks5MaxConns", &ns.SOCKS5MaxConns)
	d.setInt(t, p, "socks5MaxUDPAssociations", &ns.SOCKS5MaxUDPAssociations)
	d.setInt(t, p, "udpMaxFlows", &ns.UDPMaxFlows)
	d.setDuration(t, p, "udpIdleTimeout", &ns.UDPIdleTimeout)
}

// validate checks the netstack settings; Config.validate calls it in
// netstack mode only.
func (ns *Netstack) validate(e *errList) {
	if s := ns.SOCKS5; s != "" {
		if _, _, msg := splitHostPort(s, true); msg != "" {
			e.checkf("netstack.socks5", msg)
		}
	}
	if ns.SOCKS5AuthFile != "" && ns.SOCKS5 == "" {
		e.checkf("netstack.socks5AuthFile", "set, but netstack.socks5 is empty (no proxy to protect)")
	}
	checkRange := func(path string, v, limit int) {
		if v < 1 || v > limit {
			e.checkf(path, fmt.Sprintf("%d is out of range (1..%d)", v, limit))
		}
	}
	checkRange("netstack.socks5MaxConns", ns.SOCKS5MaxConns, MaxSOCKS5MaxConns)
	checkRange("netstack.socks5MaxUDPAssociations", ns.SOCKS5MaxUDPAssociations, MaxSOCKS5MaxConns)
	checkRange("netstack.udpMaxFlows", ns.UDPMaxFlows, MaxUDPMaxFlows)
	if ns.UDPIdleTimeout < MinUDPIdleTimeout {
		e.checkf("netstack.udpIdleTimeout", fmt.Sprintf("%s is below the minimum %s", ns.UDPIdleTimeout, MinUDPIdleTimeout))
	}
}
