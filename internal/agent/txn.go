package agent

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// This file carries out the part of a configuration change that can fail:
// WireGuard's peers and the kernel's routes. Every step first records how
// to undo it; when a step fails, the undo log runs backwards and the relay
// is back where it was. The in-memory state (Bind paths, health monitor,
// selector, packet rules) changes only in commit, after every fallible step
// has succeeded, so it never needs undoing.

// ErrRollbackFailed is wrapped by the error of an Apply whose change failed
// and whose rollback failed too: WireGuard or the routes may then differ
// from the running configuration until a later Apply succeeds. Any other
// Apply error means nothing changed.
var ErrRollbackFailed = errors.New("rolling back failed too")

// undoLog holds the undo steps of a change, in the order they were taken.
type undoLog []func() error

func (u *undoLog) add(f func() error) { *u = append(*u, f) }

// run undoes everything, last step first, and returns every failure.
func (u undoLog) run() error {
	var errs []error
	for i := len(u) - 1; i >= 0; i-- {
		if err := u[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// execute carries out pl's WireGuard and route changes. On error it rolls
// them back and says whether that worked.
func (a *Agent) execute(pl *plan) error {
	var undo undoLog
	err := a.executeSteps(pl, &undo)
	if err == nil {
		return nil
	}
	if rerr := undo.run(); rerr != nil {
		return fmt.Errorf("applying configuration: %w; %w, WireGuard or routes may differ from the running configuration until the next reload: %w", err, ErrRollbackFailed, rerr)
	}
	return fmt.Errorf("applying configuration (rolled back: the running configuration stays): %w", err)
}

func (a *Agent) executeSteps(pl *plan, undo *undoLog) error {
	// 0. Setting a peer in step 1 takes its allowed IPs away from whichever
	// running peer held them (a removed peer, or a kept one that gives
	// them up), and that peer's own undo may never be registered: a
	// removed peer has none before step 3, and a kept peer listed after a
	// failing one none at all. So every running peer that can lose allowed
	// IPs gets its old settings back (replace_allowed_ips), registered
	// first so that it runs last, after every other peer's undo has let go
	// of what it took.
	for _, old := range a.losers(pl) {
		started := a.view(old).started
		undo.add(func() error {
			if err := a.dp.wg.IpcSet(peerUAPI(&old.cfg, started)); err != nil {
				return fmt.Errorf("peers[%s]: restoring WireGuard allowed IPs: %w", old.cfg.Name, err)
			}
			return nil
		})
	}

	// 1. WireGuard peers, added or updated in place. Their order does not
	// matter when a prefix moves between peers: wireguard-go gives an
	// allowed IP to the last peer that sets it, and replace_allowed_ips
	// drops only what the peer itself still holds. The undo step is
	// recorded first: a failed IpcSet may have applied part of its lines.
	for _, st := range pl.changed {
		undo.add(a.undoWireGuardPeer(st, a.old(st.cfg.Name)))
		if err := a.dp.wg.IpcSet(peerUAPI(&st.cfg, st.carried.started)); err != nil {
			return fmt.Errorf("peers[%s]: configuring WireGuard: %w", st.cfg.Name, err)
		}
	}

	// 2. Routes (TUN mode): the route table refuses a prefix that another
	// peer holds, so moveRoutes shrinks every peer first and grows after.
	if a.dp.routes != nil {
		from, to := a.routeChange(pl)
		undo.add(func() error { return a.moveRoutes(to, from, false) })
		if err := a.moveRoutes(from, to, true); err != nil {
			return err
		}
	}

	// 3. WireGuard removals, last: a removed peer loses its session, which
	// no undo can bring back. wireguard-go fails a removal only for a
	// malformed request, which removePeerUAPI never produces; should one fail
	// anyway, the peers removed before it are added back (and handshake
	// afresh).
	var gone []*peerState
	gone = append(gone, pl.removed...)
	for _, st := range pl.changed {
		if a.rekeyed(st) {
			gone = append(gone, a.old(st.cfg.Name))
		}
	}
	for _, st := range gone {
		started := a.view(st).started
		undo.add(func() error {
			if err := a.dp.wg.IpcSet(peerUAPI(&st.cfg, started)); err != nil {
				return fmt.Errorf("peers[%s]: adding back to WireGuard: %w", st.cfg.Name, err)
			}
			return nil
		})
		if err := a.dp.wg.IpcSet(removePeerUAPI(st.cfg.PublicKey)); err != nil {
			return fmt.Errorf("peers[%s]: removing from WireGuard: %w", st.cfg.Name, err)
		}
	}
	return nil
}

// losers returns the running peers that a step of pl can take allowed IPs
// from, sorted by name: every removed peer, and every running peer holding
// a prefix that a changed peer under another public key will hold.
func (a *Agent) losers(pl *plan) []*peerState {
	out := slices.Clone(pl.removed)
	for _, old := range a.peers {
		if slices.Contains(out, old) {
			continue
		}
		for _, st := range pl.changed {
			if st.cfg.PublicKey != old.cfg.PublicKey && len(commonPrefixes(old.cfg.Prefixes, st.cfg.Prefixes)) > 0 {
				out = append(out, old)
				break
			}
		}
	}
	slices.SortFunc(out, func(x, y *peerState) int { return strings.Compare(x.cfg.Name, y.cfg.Name) })
	return out
}

// undoWireGuardPeer returns the undo of setting st in WireGuard: a new
// public key is removed again, and the running peer of that name (if any)
// gets its own settings and allowed IPs back.
func (a *Agent) undoWireGuardPeer(st, old *peerState) func() error {
	var was carried
	if old != nil {
		was = a.view(old)
	}
	return func() error {
		var errs []error
		if old == nil || old.cfg.PublicKey != st.cfg.PublicKey {
			if err := a.dp.wg.IpcSet(removePeerUAPI(st.cfg.PublicKey)); err != nil {
				errs = append(errs, fmt.Errorf("peers[%s]: removing the new key from WireGuard: %w", st.cfg.Name, err))
			}
		}
		if old != nil {
			if err := a.dp.wg.IpcSet(peerUAPI(&old.cfg, was.started)); err != nil {
				errs = append(errs, fmt.Errorf("peers[%s]: restoring WireGuard settings: %w", st.cfg.Name, err))
			}
		} else {
			// WireGuard parsed the peer's endpoint, which made the Bind
			// create it; a peer that never was must not stay there.
			a.dp.paths.RemovePeer(st.cfg.Name)
		}
		return errors.Join(errs...)
	}
}

// routeState is what the route table holds for one peer.
type routeState struct {
	prefixes  []netip.Prefix
	reachable bool
}

// routeChange returns the route state of every peer pl touches, before and
// after (a nil entry: the peer has no routes there).
func (a *Agent) routeChange(pl *plan) (from, to map[string]*routeState) {
	from, to = map[string]*routeState{}, map[string]*routeState{}
	for _, st := range pl.removed {
		from[st.cfg.Name] = &routeState{st.cfg.Prefixes, a.view(st).reachable}
		to[st.cfg.Name] = nil
	}
	for _, st := range pl.changed {
		if old := a.old(st.cfg.Name); old != nil {
			from[st.cfg.Name] = &routeState{old.cfg.Prefixes, a.view(old).reachable}
		} else {
			from[st.cfg.Name] = nil
		}
		to[st.cfg.Name] = &routeState{st.cfg.Prefixes, st.carried.reachable}
	}
	return from, to
}

// moveRoutes takes the peers in to from their state in from to their state
// in to, in two passes so that no step claims a prefix another peer still
// holds, whatever the order of the peers: first every peer drops what it
// loses (removed peers go), then every peer gets its new prefixes. Both
// configurations give each prefix to one peer at most, so the second pass
// never conflicts. With stop it returns at the first failure (a forward
// change, to be rolled back); without, it tries every step (a rollback).
func (a *Agent) moveRoutes(from, to map[string]*routeState, stop bool) error {
	names := slices.Sorted(maps.Keys(to))
	var errs []error
	fail := func(err error) bool {
		errs = append(errs, err)
		return stop
	}
	for _, name := range names {
		f, t := from[name], to[name]
		switch {
		case f == nil:
		case t == nil:
			if err := a.dp.routes.RemovePeer(name); err != nil && fail(fmt.Errorf("peers[%s]: removing routes: %w", name, err)) {
				return errors.Join(errs...)
			}
		default:
			keep := commonPrefixes(f.prefixes, t.prefixes)
			if len(keep) == len(f.prefixes) {
				continue // loses nothing
			}
			if err := a.dp.routes.SetPeer(name, keep, f.reachable); err != nil && fail(fmt.Errorf("peers[%s]: routes: %w", name, err)) {
				return errors.Join(errs...)
			}
		}
	}
	for _, name := range names {
		t := to[name]
		if t == nil {
			continue
		}
		if err := a.dp.routes.SetPeer(name, t.prefixes, t.reachable); err != nil && fail(fmt.Errorf("peers[%s]: routes: %w", name, err)) {
			return errors.Join(errs...)
		}
	}
	return errors.Join(errs...)
}

// commonPrefixes returns the prefixes of a that b has too (compared
// masked, as the route table does).
func commonPrefixes(a, b []netip.Prefix) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range a {
		if slices.ContainsFunc(b, func(q netip.Prefix) bool { return q.Masked() == p.Masked() }) {
			out = append(out, p)
		}
	}
	return out
}
