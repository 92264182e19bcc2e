package agent

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/liqo-relay/relay/pkg/config"
	"github.com/liqo-relay/relay/pkg/failover"
	"github.com/liqo-relay/relay/pkg/health"
	"github.com/liqo-relay/relay/pkg/router/bind"
)

// peerState is the owner goroutine's view of one peer.
type peerState struct {
	cfg       config.Peer
	key       *health.PeerKey
	paths     []pathState
	active    int  // config index of the path WireGuard's traffic takes
	started   bool // the first path came up and the first handshake went out
	hsReason  string
	deferred  *deferredHandshake // a handshake we leave to the peer first
	slots     []int              // config index -> stable path slot (health ids, probe path field)
	nextSlot  int
	reachable bool
	rxSeen    map[netip.AddrPort]uint64 // passive evidence: packets seen per source
}

type pathState struct {
	addr     netip.AddrPort // resolved endpoint; invalid when resolution failed
	err      string         // why addr is invalid
	observed netip.AddrPort // where this path's answers come from (differs behind NAT)
}

// resolveTimeout bounds the DNS lookups of one apply.
const resolveTimeout = 3 * time.Second

// apply makes cfg the running configuration. Everything that can fail is
// checked before anything changes, so a rejected config leaves the relay as
// it was.
func (a *Agent) apply(cfg *config.Config, initial bool) error {
	if !initial {
		if err := immutableChanges(a.cfg, cfg); err != nil {
			return err
		}
	}
	rules, err := compileRules(cfg)
	if err != nil {
		return err
	}
	ourPriv := health.PrivateKey(cfg.PrivateKey)

	// Prepare every added or changed peer without touching the device.
	type change struct{ st *peerState }
	var changes []change
	for _, p := range cfg.Peers {
		old, ok := a.peers[p.Name]
		if ok && old.cfg.Equal(p) {
			continue
		}
		key, err := health.NewPeerKey(ourPriv, health.PublicKey(p.PublicKey))
		if err != nil {
			return fmt.Errorf("peers[%s].publicKey: %w", p.Name, err)
		}
		st := &peerState{cfg: p, key: key, rxSeen: map[netip.AddrPort]uint64{}}
		st.paths = a.resolvePaths(p)
		assignSlots(st, old)
		st.hsReason = "peer-added"
		if initial {
			st.hsReason = "startup"
		}
		if ok && old.cfg.PublicKey == p.PublicKey {
			st.started = old.started
		}
		if ok {
			st.reachable = old.reachable
			st.active = 0
			if old.active < len(old.cfg.Paths) {
				st.active = max(0, pathIndex(st, old.cfg.Paths[old.active].Name))
			}
		}
		changes = append(changes, change{st: st})
	}
	var removed []*peerState
	for name, st := range a.peers {
		if _, ok := cfg.Peer(name); !ok {
			removed = append(removed, st)
		}
	}
	slices.SortFunc(removed, func(x, y *peerState) int { return strings.Compare(x.cfg.Name, y.cfg.Name) })

	// Apply. Removals first: a renamed peer frees its prefixes for the new name.
	var errs []error
	for _, st := range removed {
		errs = append(errs, a.removePeer(st))
	}
	for _, c := range changes {
		if old, ok := a.peers[c.st.cfg.Name]; ok && old.cfg.PublicKey != c.st.cfg.PublicKey {
			errs = append(errs, a.removePeer(old))
		}
		errs = append(errs, a.setPeer(c.st))
	}
	a.dp.pipe.SetRules(rules)
	a.cfg = cfg
	a.gen++
	a.publishProbeIndex()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("applying configuration: %w", err)
	}
	return nil
}

// reload is apply for a configuration that arrives while running.
func (a *Agent) reload(cfg *config.Config) error {
	if err := a.apply(cfg, false); err != nil {
		return err
	}
	a.log.Info("configuration applied", "generation", a.gen, "peers", len(cfg.Peers))
	return nil
}

// immutableChanges lists the settings that only a restart can change.
func immutableChanges(old, cfg *config.Config) error {
	var bad []string
	if old.Name != cfg.Name {
		bad = append(bad, "name")
	}
	if old.PrivateKey != cfg.PrivateKey {
		bad = append(bad, "privateKey")
	}
	if old.Mode != cfg.Mode {
		bad = append(bad, "mode")
	}
	if old.ListenPort != cfg.ListenPort {
		bad = append(bad, "listenPort")
	}
	if !slices.Equal(old.Addresses, cfg.Addresses) {
		bad = append(bad, "addresses")
	}
	if old.MTU != cfg.MTU {
		bad = append(bad, "mtu")
	}
	if cfg.Mode == config.ModeTUN && old.Tun != cfg.Tun {
		bad = append(bad, "tun")
	}
	if cfg.Mode == config.ModeNetstack && old.Netstack != cfg.Netstack {
		bad = append(bad, "netstack")
	}
	if !slices.Equal(old.Exports, cfg.Exports) && cfg.Mode == config.ModeNetstack {
		bad = append(bad, "exports (netstack mode)")
	}
	if old.Admin != cfg.Admin {
		bad = append(bad, "admin")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s cannot change while running: restart the relay to change them", strings.Join(bad, ", "))
	}
	return nil
}

// resolvePaths resolves the endpoints of p's paths. A failure is kept on
// the path (it stays down and is retried by housekeeping), not fatal.
func (a *Agent) resolvePaths(p config.Peer) []pathState {
	out := make([]pathState, len(p.Paths))
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
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

func bindPaths(st *peerState) []bind.Path {
	out := make([]bind.Path, len(st.paths))
	for i, p := range st.paths {
		out[i] = bind.Path{Name: st.cfg.Paths[i].Name, Addr: p.addr}
	}
	return out
}

// healthSettings are the monitor's settings of a peer: config embeds
// health's own type, so this is the embedded value as it is.
func healthSettings(h config.Health) health.Settings { return h.Probing }

// failoverSettings are the selector's settings of a peer: config embeds
// failover's own type, so this is the embedded value as it is.
func failoverSettings(h config.Health) failover.Settings { return h.Selection }

// setPeer adds or updates one peer everywhere: WireGuard, the Bind, the
// health monitor, the selector and the routes.
func (a *Agent) setPeer(st *peerState) error {
	name := st.cfg.Name
	old := a.peers[name]
	a.dp.bind.SetPeer(name, bindPaths(st))
	if err := a.dp.dev.IpcSet(peerUAPI(&st.cfg, st.started)); err != nil {
		return fmt.Errorf("peer %s: configuring WireGuard: %w", name, err)
	}
	specs := make([]failover.PathSpec, len(st.cfg.Paths))
	hs := healthSettings(st.cfg.Health)
	for i, p := range st.cfg.Paths {
		specs[i] = failover.PathSpec{Name: p.Name, Bias: p.Bias}
		a.mon.SetPath(st.pathID(i), hs)
		a.mon.SetActive(st.pathID(i), i == st.active)
	}
	if old != nil {
		for j, p := range old.cfg.Paths {
			if pathIndex(st, p.Name) < 0 {
				a.mon.RemovePath(old.pathID(j))
				a.metrics.RemovePath(name, p.Name)
			}
		}
	}
	a.sel.SetPeer(name, specs, failoverSettings(st.cfg.Health))
	if path, ok := a.sel.Active(name); ok && pathIndex(st, path) >= 0 {
		st.active = pathIndex(st, path)
		st.reachable = true
	}
	a.dp.bind.SetActive(name, st.active)
	a.peers[name] = st
	if a.dp.routes != nil {
		if err := a.dp.routes.SetPeer(name, st.cfg.Prefixes, st.reachable); err != nil {
			return fmt.Errorf("peer %s: routes: %w", name, err)
		}
	}
	return nil
}

func (a *Agent) removePeer(st *peerState) error {
	name := st.cfg.Name
	var errs []error
	if err := a.dp.dev.IpcSet(removePeerUAPI(st.cfg.PublicKey)); err != nil {
		errs = append(errs, fmt.Errorf("peer %s: removing from WireGuard: %w", name, err))
	}
	a.dp.bind.RemovePeer(name)
	for i := range st.cfg.Paths {
		a.mon.RemovePath(st.pathID(i))
	}
	a.sel.RemovePeer(name)
	if a.dp.routes != nil {
		if err := a.dp.routes.RemovePeer(name); err != nil {
			errs = append(errs, fmt.Errorf("peer %s: removing routes: %w", name, err))
		}
	}
	a.metrics.RemovePeer(name)
	delete(a.peers, name)
	return errors.Join(errs...)
}

// pathIndex returns the config index of the path called name, or -1.
func pathIndex(st *peerState, name string) int {
	for i, p := range st.cfg.Paths {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// assignSlots gives every path of st a stable slot: a path keeps its slot
// across reloads as long as its name stays, so reordering paths keeps their
// health history and in-flight probes stay attributable.
func assignSlots(st, old *peerState) {
	st.slots = make([]int, len(st.cfg.Paths))
	if old != nil {
		st.nextSlot = old.nextSlot
	}
	for i, p := range st.cfg.Paths {
		st.slots[i] = -1
		if old != nil {
			if j := pathIndex(old, p.Name); j >= 0 {
				st.slots[i] = old.slots[j]
				st.paths[i].observed = old.paths[j].observed
			}
		}
	}
	for i := range st.slots {
		if st.slots[i] < 0 {
			st.slots[i] = st.nextSlot
			st.nextSlot++
		}
	}
}

// indexOfSlot maps a slot back to the config index, or -1.
func (st *peerState) indexOfSlot(slot int) int {
	for i, s := range st.slots {
		if s == slot {
			return i
		}
	}
	return -1
}

// pathID is the health monitor's id of the path at config index i.
func (st *peerState) pathID(i int) health.PathID {
	return health.PathID{Peer: st.cfg.Name, Path: st.slots[i]}
}
