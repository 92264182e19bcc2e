package agent

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/pkg/config"
)

// resolveTimeout bounds the DNS lookups of one apply.
const resolveTimeout = 3 * time.Second

// resolveChanged resolves the path endpoints of the peers of cfg that are
// added or changed relative to running (every peer when running is nil).
// It runs on the caller of New or Apply, never on the owner goroutine, so
// a slow resolver delays that caller only, not probing.
func (a *Agent) resolveChanged(ctx context.Context, running, cfg *config.Config) map[string][]pathState {
	out := map[string][]pathState{}
	for _, p := range cfg.Peers {
		if running != nil {
			if old, ok := running.Peer(p.Name); ok && old.Equal(p) {
				continue
			}
		}
		out[p.Name] = a.resolvePaths(ctx, p)
	}
	return out
}

// resolvePaths resolves the endpoints of p's paths. A failure is kept on
// the path (it stays down until a later apply resolves it), not fatal.
func (a *Agent) resolvePaths(ctx context.Context, p config.Peer) []pathState {
	out := make([]pathState, len(p.Paths))
	for i, path := range p.Paths {
		ap, err := a.resolve(ctx, path)
		if err != nil {
			out[i].err = err.Error()
			a.log.Warn("cannot resolve path endpoint", "peer", p.Name, "path", path.Name, "endpoint", path.Endpoint, "err", err)
			continue
		}
		out[i].addr = ap
	}
	return out
}

// literalPaths is resolvePaths without the resolver: host names are left
// unresolved. The owner goroutine uses it when an endpoint reaches it
// unresolved, which Apply's serialisation rules out.
func (a *Agent) literalPaths(p config.Peer) []pathState {
	out := make([]pathState, len(p.Paths))
	for i, path := range p.Paths {
		ip, err := netip.ParseAddr(path.Host)
		if err != nil {
			out[i].err = fmt.Sprintf("host name %q was not resolved before the change was applied", path.Host)
			continue
		}
		out[i].addr = netip.AddrPortFrom(ip.Unmap(), path.Port)
	}
	return out
}

func (a *Agent) resolve(ctx context.Context, path config.Path) (netip.AddrPort, error) {
	if ip, err := netip.ParseAddr(path.Host); err == nil {
		return netip.AddrPortFrom(ip.Unmap(), path.Port), nil
	}
	ips, err := a.opts.Resolver.LookupNetIP(ctx, "ip", path.Host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolving %q: %w", path.Host, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("resolving %q: no addresses", path.Host)
	}
	// Prefer IPv4, as Liqo's gateways do; fall back to the first address.
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return netip.AddrPortFrom(ip.Unmap(), path.Port), nil
		}
	}
	return netip.AddrPortFrom(ips[0], path.Port), nil
}
