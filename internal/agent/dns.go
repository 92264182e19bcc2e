package agent

import (
	"context"
	"net/netip"
	"reflect"
	"slices"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/resolver"
)

// This file keeps path endpoints given as host names on their current
// address: a resolver.Watcher, run beside the owner goroutine, looks them
// up again before their TTL runs out and reports every change, which the
// owner goroutine applies to that path alone (onDNS).

// newWatcher returns the Watcher of the agent's endpoint names: it looks
// them up with opts.Resolver when a test gave one (TTL unknown: dns.minTTL
// applies), else with miekg/dns under cfg.DNS.
func (a *Agent) newWatcher(cfg *config.Config) *resolver.Watcher {
	var look resolver.Lookuper = resolver.NewClient(cfg.DNS)
	if a.opts.Resolver != nil {
		look = netResolver{a.opts.Resolver}
	}
	return resolver.NewWatcher(cfg.DNS, look, resolver.WatcherOptions{
		Logger:   a.log,
		Now:      a.clock.Now,
		OnChange: a.dnsChanged,
		OnLookup: a.metrics.DNSLookup,
	})
}

// netResolver adapts a Resolver (net.Resolver's LookupNetIP) to
// resolver.Lookuper, IPv4 first as before.
type netResolver struct{ r Resolver }

func (n netResolver) Lookup(ctx context.Context, host string) (resolver.Answer, error) {
	ips, err := n.r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return resolver.Answer{}, err
	}
	var v4, v6 []netip.Addr
	for _, ip := range ips {
		if ip = ip.Unmap(); ip.Is4() {
			v4 = append(v4, ip)
		} else {
			v6 = append(v6, ip)
		}
	}
	return resolver.Answer{Addrs: append(v4, v6...)}, nil
}

// dnsChanged hands a name's new state to the owner goroutine. It runs on
// the Watcher's goroutine (or an Apply caller's) and waits its turn, until
// ctx is done or the agent stops: then the change is of no use. Before Run
// (New's lookups) there is no owner goroutine: apply reads the Watcher.
func (a *Agent) dnsChanged(ctx context.Context, r resolver.Result) {
	if !a.running.Load() {
		return
	}
	_ = a.do(ctx, func() { a.onDNS(r) })
}

// onDNS moves every path whose endpoint is r.Host to r's address, on the
// owner goroutine. WireGuard is not touched: the session does not depend
// on the address, the Bind sends to the path's new address from the next
// packet on. The path's health estimates restart (engine.SetAddr).
func (a *Agent) onDNS(r resolver.Result) {
	now := a.clock.Now()
	moved := false
	for _, p := range a.cfg.Peers {
		st, ok := a.peers[p.Name]
		if !ok {
			continue
		}
		touched := false
		for i, path := range st.cfg.Paths {
			if path.Host != r.Host {
				continue
			}
			ps := &st.paths[i]
			addr, errText := endpointOf(path, r)
			ps.err = errText
			if addr == ps.addr {
				continue
			}
			a.log.Info("path endpoint moved", "peer", p.Name, "path", path.Name, "host", r.Host,
				"from", ps.addr, "to", addr, "dns", r.State.String())
			ps.addr = addr
			a.metrics.DNSEndpointChange()
			a.carryOut(a.eng.Step(now, engine.SetAddr{Peer: p.Name, Path: i, Addr: addr}))
			touched = true
		}
		if touched {
			// SetPeer keeps the active and secondary paths and a pending
			// flowlet move, by name, as the engine has them.
			a.dp.paths.SetPeer(p.Name, bindPaths(st))
			moved = true
		}
	}
	if moved {
		a.publishProbeIndex()
	}
}

// endpointOf is path's endpoint under r, and the lookup error to show.
func endpointOf(path config.Path, r resolver.Result) (netip.AddrPort, string) {
	var addr netip.AddrPort
	if r.Addr.IsValid() {
		addr = netip.AddrPortFrom(r.Addr, path.Port)
	}
	errText := ""
	if r.Err != nil {
		errText = r.Err.Error()
	}
	return addr, errText
}

// watchedHosts lists the host names among cfg's path endpoints.
func watchedHosts(cfg *config.Config) map[string]bool {
	out := map[string]bool{}
	for _, p := range cfg.Peers {
		for _, path := range p.Paths {
			if _, err := netip.ParseAddr(path.Host); err != nil {
				out[path.Host] = true
			}
		}
	}
	return out
}

// dnsEqual and dnsServerEqual compare settings that only a restart
// changes (an empty list equals none).
func dnsEqual(x, y config.DNS) bool {
	xs, ys := x.Servers, y.Servers
	x.Servers, y.Servers = nil, nil
	return reflect.DeepEqual(x, y) && slices.Equal(xs, ys)
}

func dnsServerEqual(x, y config.DNSServer) bool {
	xl, yl := x.Listen, y.Listen
	x.Listen, y.Listen = nil, nil
	return reflect.DeepEqual(x, y) && slices.Equal(xl, yl)
}
