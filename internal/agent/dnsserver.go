package agent

import (
	"context"
	"maps"
	"net/netip"
	"slices"

	"github.com/liqo-relay/relay/internal/control/dnsserver"
	"github.com/liqo-relay/relay/internal/core/config"
)

// This file runs the topology-aware DNS responder (dnsServer, off by
// default): the agent publishes what it knows of the federation, peer
// health and path cost, as a dnsserver.View on every housekeeping round.

// listenDNS opens the responder's sockets when cfg turns it on.
func (a *Agent) listenDNS(cfg *config.Config) error {
	s := cfg.DNSServer
	if !s.Enabled() {
		return nil
	}
	h := dnsserver.NewHandler(dnsserver.HandlerConfig{
		Zone: s.Zone, TTL: s.TTL, RateLimit: s.RateLimit, Burst: s.Burst,
		Now: a.clock.Now, Logger: a.log.With("component", "dnsserver"),
		Hooks: dnsserver.Hooks{Query: a.metrics.DNSQuery, Limited: a.metrics.DNSQueryLimited},
	})
	srv, err := dnsserver.Listen(s.Listen, h)
	if err != nil {
		return err
	}
	a.dnsSrv = srv
	a.log.Info("DNS responder", "zone", s.Zone, "listen", srv.Addrs())
	return nil
}

// SetServiceEndpoints gives the responder the endpoints of the Services
// it answers for in Kubernetes mode: "<service>.<namespace>" to the
// addresses this cluster's pods dial. It replaces the previous set.
func (a *Agent) SetServiceEndpoints(ctx context.Context, services map[string][]netip.Addr) error {
	services = maps.Clone(services)
	return a.do(ctx, func() {
		a.services = services
		a.publishDNSView()
	})
}

// publishDNSView hands the responder the current view; on the owner
// goroutine.
func (a *Agent) publishDNSView() {
	if a.dnsSrv == nil {
		return
	}
	v := &dnsserver.View{
		Self: dnsserver.Cluster{
			Name: a.cfg.Name, Overlay: prefixAddrs(a.cfg.Addresses),
			Routes: a.cfg.Exports, Healthy: true,
		},
		Services: a.services,
	}
	for _, p := range a.cfg.Peers {
		if _, ok := a.peers[p.Name]; !ok {
			continue
		}
		active, reachable := a.eng.Reach(p.Name)
		c := dnsserver.Cluster{
			Name: p.Name, Overlay: overlayAddrs(a.cfg.Addresses, p.Prefixes),
			Routes: p.Prefixes, Healthy: reachable,
		}
		if reachable {
			if s, ok := a.eng.Stats(p.Name, active); ok {
				c.Cost = s.SRTT + p.Paths[active].Bias
			}
		}
		v.Peers = append(v.Peers, c)
	}
	a.dnsSrv.SetView(v)
}

// prefixAddrs returns the addresses of the interface prefixes ps.
func prefixAddrs(ps []netip.Prefix) []netip.Addr {
	var out []netip.Addr
	for _, p := range ps {
		if !slices.Contains(out, p.Addr()) {
			out = append(out, p.Addr())
		}
	}
	return out
}

// overlayAddrs finds a peer relay's overlay addresses among its prefixes:
// the single addresses (/32, /128; docs/config.md asks for the peer
// relay's addresses there) that lie in our own overlay network, that is
// the network of one of our addresses, taken as at least a /24 (IPv4) or
// /64 (IPv6) when our address is a single one. Per-pod /32s lie in pod
// and external CIDRs, never there.
func overlayAddrs(ours, theirs []netip.Prefix) []netip.Addr {
	var nets []netip.Prefix
	for _, a := range ours {
		bits := a.Bits()
		if a.Addr().Is4() {
			bits = min(bits, 24)
		} else {
			bits = min(bits, 64)
		}
		nets = append(nets, netip.PrefixFrom(a.Addr(), bits).Masked())
	}
	var out []netip.Addr
	for _, p := range theirs {
		if !p.IsSingleIP() || slices.Contains(out, p.Addr()) {
			continue
		}
		for _, n := range nets {
			if n.Contains(p.Addr()) {
				out = append(out, p.Addr())
				break
			}
		}
	}
	return out
}
