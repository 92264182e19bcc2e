package agent

import (
	"net/netip"
	"time"

	"golang.zx2c4.com/wireguard/device"

	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// wgDevice is the part of wireguard-go's device the agent configures and
// reads at run time (its UAPI). *device.Device implements it; tests wrap it
// to inject failures.
type wgDevice interface {
	IpcSet(uapi string) error
	IpcGet() (string, error)
}

// handshaker starts WireGuard handshakes with a peer, by its public key;
// with expire, the current keys are dropped first. reason is why
// (engine.ReasonStartup and the others), for fakes that record it.
// deviceHandshaker implements it over the wireguard-go device.
type handshaker interface {
	Initiate(peer keys.Public, reason string, expire bool) error
}

// deviceHandshaker starts handshakes on a wireguard-go device. A peer the
// device does not have is no error: it was removed meanwhile.
type deviceHandshaker struct{ dev *device.Device }

func (d deviceHandshaker) Initiate(peer keys.Public, _ string, expire bool) error {
	p := d.dev.LookupPeer(device.NoisePublicKey(peer))
	if p == nil {
		return nil
	}
	if expire {
		p.ExpireCurrentKeypairs()
	}
	return p.SendHandshakeInitiation(false)
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

// pathSteering is the part of the multipath Bind that the owner loop
// changes at run time: each peer's paths, which of them carries its
// traffic (at once, or at a flowlet boundary), and whether WireGuard may
// start handshakes. *multipath.Bind implements it.
type pathSteering interface {
	SetPeer(name string, paths []multipath.Path)
	RemovePeer(name string)
	SetActive(name string, path int)
	Move(name string, active, secondary int, gap time.Duration)
	HoldInitiations(name string, hold bool)
}

// pathEvidence is what the owner loop reads of the multipath Bind:
// authenticated receive counters by source, the last receive from a
// peer's addresses and the redundant copies sent.
type pathEvidence interface {
	Counters(name string, srcs []multipath.Source) (multipath.Counters, bool)
	LastRxFrom(name string, a1, a2 netip.AddrPort) time.Time
	Redundant(name string) (packets, bytes uint64)
}

// probeSender sends the owner loop's probes and answers on the Bind's
// sockets.
type probeSender interface {
	SendTo(pkt []byte, to netip.AddrPort) error
	Flush(o *multipath.Outbox) error
}

// pathBind is the multipath Bind as the owner loop uses it once the data
// plane is up; setup (the probe hooks, the clock, the TUN wrapper) uses the
// concrete *multipath.Bind.
type pathBind interface {
	pathSteering
	pathEvidence
	probeSender
}
