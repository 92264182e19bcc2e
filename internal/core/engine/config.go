package engine

import (
	"net/netip"

	"github.com/liqo-relay/relay/internal/core/config"
)

// SpecOf is peer p of a configuration as the engine decides for it, its
// paths at addrs (by index; a missing or invalid one: not resolved).
func SpecOf(p config.Peer, addrs []netip.AddrPort) PeerSpec {
	s := PeerSpec{
		Name:      p.Name,
		PublicKey: p.PublicKey,
		NextKey:   p.NextPublicKey,
		Probing:   p.Health.Probing,
		Selection: p.Health.Selection,
		Keepalive: p.PersistentKeepalive != 0,
		Paths:     make([]PathSpec, len(p.Paths)),
	}
	for i, path := range p.Paths {
		s.Paths[i] = PathSpec{Name: path.Name, Bias: path.Bias}
		if i < len(addrs) {
			s.Paths[i].Addr = addrs[i]
		}
	}
	return s
}
