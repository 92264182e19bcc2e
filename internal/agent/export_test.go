package agent

import (
	"bufio"
	"context"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// This file gives the external tests (package agent_test) the seams of the
// agent: fault injection into WireGuard's UAPI and the route table, the
// resolver, and the owner loop's wake-up counts.

// RouteTable is the agent's route table seam (see routeTable).
type RouteTable = routeTable

// WrapIpcSet makes every later WireGuard IpcSet of a go through fail first:
// a non-nil error from fail is returned instead of configuring anything.
func WrapIpcSet(ctx context.Context, a *Agent, fail func(uapi string) error) error {
	return a.do(ctx, func() { a.dp.wg = faultyDevice{a.dp.wg, fail} })
}

type faultyDevice struct {
	wgDevice
	fail func(string) error
}

func (d faultyDevice) IpcSet(uapi string) error {
	if err := d.fail(uapi); err != nil {
		return err
	}
	return d.wgDevice.IpcSet(uapi)
}

// InstallRoutes gives a (a netstack relay, which has no route table) the
// route table rt, first filled with the running peers' routes.
func InstallRoutes(ctx context.Context, a *Agent, rt RouteTable) error {
	var err error
	derr := a.do(ctx, func() {
		for name, st := range a.peers {
			if e := rt.SetPeer(name, st.cfg.Prefixes, a.view(st).reachable); e != nil && err == nil {
				err = e
			}
		}
		a.dp.routes = rt
	})
	if derr != nil {
		return derr
	}
	return err
}

// SetResolver replaces a's resolver for later Apply calls.
func SetResolver(a *Agent, r Resolver) {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	a.opts.Resolver = r
	a.dns.SetLookuper(netResolver{r})
}

// WireGuardPeers returns what WireGuard holds of every peer that a
// configuration sets: public key, endpoint, keepalive and allowed IPs, one
// line each; peers sorted by key, allowed IPs sorted.
func WireGuardPeers(ctx context.Context, a *Agent) (string, error) {
	var text string
	var err error
	if derr := a.do(ctx, func() { text, err = a.dp.wg.IpcGet() }); derr != nil {
		return "", derr
	}
	if err != nil {
		return "", err
	}
	var peers [][]string
	var ips []string
	flush := func() {
		if len(peers) > 0 {
			slices.Sort(ips)
			peers[len(peers)-1] = append(peers[len(peers)-1], ips...)
		}
		ips = nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, _, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "public_key":
			flush()
			peers = append(peers, []string{sc.Text()})
		case "endpoint", "persistent_keepalive_interval":
			peers[len(peers)-1] = append(peers[len(peers)-1], sc.Text())
		case "allowed_ip":
			ips = append(ips, sc.Text())
		}
	}
	flush()
	slices.SortFunc(peers, func(x, y []string) int { return strings.Compare(x[0], y[0]) })
	var out []string
	for _, p := range peers {
		out = append(out, p...)
	}
	return strings.Join(out, "\n"), nil
}

// Wakeups returns how often the owner loop woke for its deadline timer and
// for housekeeping.
func Wakeups(a *Agent) (timer, house uint64) {
	return a.wakes.timer.Load(), a.wakes.house.Load()
}

// SleepFor exposes sleepFor.
var SleepFor = sleepFor

// DNSServerAddrs returns where a's DNS responder listens (nil when off).
func DNSServerAddrs(a *Agent) []netip.AddrPort {
	if a.dnsSrv == nil {
		return nil
	}
	return a.dnsSrv.Addrs()
}

// MoveGap is the reorder gap the last move of peer's traffic waited for
// (engine.Move): 0 when it moved at once.
func MoveGap(ctx context.Context, a *Agent, peer string) (time.Duration, error) {
	var gap time.Duration
	err := a.do(ctx, func() {
		if v, ok := a.eng.Peer(peer); ok {
			gap = v.MoveGap
		}
	})
	return gap, err
}

// Paths is the agent's multipath Bind seam (see pathBind).
type Paths = pathBind

// InstallPaths puts wrap(a's Bind) between a's owner loop and its Bind,
// and first tells the wrapper every running peer's paths (SetPeer, which
// the Bind takes as no change).
func InstallPaths(ctx context.Context, a *Agent, wrap func(Paths) Paths) error {
	return a.do(ctx, func() {
		p := wrap(a.dp.paths)
		for name, st := range a.peers {
			p.SetPeer(name, bindPaths(st))
		}
		a.dp.paths = p
	})
}
