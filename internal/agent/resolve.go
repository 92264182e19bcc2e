package agent

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/refresh"
	"github.com/liqo-relay/relay/internal/core/status"
)

// resolveChanged looks up the host-name endpoints of the peers of cfg that
// are added or changed relative to running (every peer when running is
// nil), through the Watcher, which keeps them fresh from then on. It runs
// on the caller of New or Apply, never on the owner goroutine, so a slow
// resolver delays that caller only, not probing.
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
// the path, not fatal: the path stays down, and the Watcher retries the
// name with backoff (dns.retryMin to dns.retryMax) and moves the path to
// its address once a lookup succeeds.
func (a *Agent) resolvePaths(ctx context.Context, p config.Peer) []pathState {
	out := make([]pathState, len(p.Paths))
	for i, path := range p.Paths {
		if ip, err := netip.ParseAddr(path.Host); err == nil {
			out[i].addr = netip.AddrPortFrom(ip.Unmap(), path.Port)
			continue
		}
		r := a.dns.Resolve(ctx, path.Host)
		out[i].addr, out[i].err = endpointOf(path, r)
		if !out[i].addr.IsValid() {
			a.log.Warn("cannot resolve path endpoint (retrying)", "peer", p.Name, "path", path.Name, "endpoint", path.Endpoint, "err", r.Err)
		}
	}
	return out
}

// literalPaths is resolvePaths without lookups: IP endpoints are parsed,
// host names take what the Watcher holds for them. The owner goroutine
// uses it when a peer's endpoints reach it unresolved, which Apply's
// serialisation rules out.
func (a *Agent) literalPaths(p config.Peer) []pathState {
	out := make([]pathState, len(p.Paths))
	for i, path := range p.Paths {
		if ip, err := netip.ParseAddr(path.Host); err == nil {
			out[i].addr = netip.AddrPortFrom(ip.Unmap(), path.Port)
			continue
		}
		if r, ok := a.dns.Get(path.Host); ok {
			out[i].addr, out[i].err = endpointOf(path, r)
			continue
		}
		out[i].err = fmt.Sprintf("host name %q was not resolved before the change was applied", path.Host)
	}
	return out
}

// freshen takes the Watcher's current answer for st's host-name paths: a
// change it reported between the caller's lookup and this apply reached
// the owner goroutine before the peer did, and would be lost.
func (a *Agent) freshen(st *peerState) {
	for i, path := range st.cfg.Paths {
		if r, ok := a.dns.Get(path.Host); ok && r.State != refresh.Resolving {
			st.paths[i].addr, st.paths[i].err = endpointOf(path, r)
		}
	}
}

// dnsState is the admin state and error of path i of ps: for a host-name
// endpoint without an address, resolving or unresolved instead of down.
func (a *Agent) dnsState(ps *peerState, i int) (status.PathState, string, bool) {
	path := ps.cfg.Paths[i]
	if _, err := netip.ParseAddr(path.Host); err == nil {
		return "", "", false
	}
	r, ok := a.dns.Get(path.Host)
	if !ok {
		return status.PathUnresolved, ps.paths[i].err, true
	}
	errText := ""
	if r.Err != nil {
		errText = r.Err.Error()
	}
	switch r.State {
	case refresh.Resolving:
		return status.PathResolving, errText, true
	case refresh.Unresolved:
		return status.PathUnresolved, errText, true
	}
	return "", errText, false
}
