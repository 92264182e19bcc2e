package agent

import (
	"net/netip"
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/status"
)

// carryOut does what one engine step decided, in the order of Ready's
// fields: metric series of forgotten peers and paths go, probes go out,
// measurements and transitions are recorded, traffic moves, routes follow
// reachability, keepalives, handshakes and holds are applied. Nothing here
// decides: where a step of it fails, it is logged, and the engine's next
// decision stands.
func (a *Agent) carryOut(r *engine.Ready) {
	for _, name := range r.Forget {
		a.metrics.RemovePeer(name)
	}
	for _, p := range r.RemovedPaths {
		a.metrics.RemovePath(p.Peer, p.Path)
	}
	for _, p := range r.Probes {
		a.sendProbeOn(p)
	}
	if len(r.Probes) > 0 {
		a.flushProbes()
	}
	a.reportSendDelay(r.Due)
	if r.Stalled > 0 {
		a.metrics.Stall(r.Stalled)
	}
	for _, m := range r.RTTs {
		a.recordRTT(m)
	}
	for _, t := range r.Paths {
		a.log.Info("path state", "peer", t.Peer, "path", t.Path, "up", t.Up)
		a.metrics.PathUp(t.Peer, t.Path, t.Up)
	}
	for _, ev := range r.Switches {
		a.recordSwitch(ev.Peer, ev.From, ev.To, string(ev.Reason), ev.At)
	}
	for _, m := range r.Moves {
		a.dp.paths.Move(m.Peer, m.Active, m.Second, m.Gap)
	}
	for _, rt := range r.Routes {
		a.setRoutes(rt)
	}
	for _, x := range r.Redundancy {
		a.log.Info("redundant sending", "peer", x.Peer, "mode", string(x.Mode), "to", x.To,
			"loss", x.Trouble.Loss, "suspect", x.Trouble.Suspect, "switched", x.Trouble.Switched)
	}
	for _, name := range r.Restarts {
		a.log.Info("peer restarted: starting a new handshake", "peer", name)
	}
	for _, name := range r.Keepalives {
		if st, ok := a.peers[name]; ok {
			if err := a.dp.wg.IpcSet(keepaliveUAPI(&st.cfg)); err != nil {
				a.log.Error("setting keepalive", "peer", name, "err", err)
			}
		}
	}
	for _, h := range r.Handshakes {
		if st, ok := a.peers[h.Peer]; ok {
			a.handshake(st, h.Reason, h.Expire)
		}
	}
	for _, h := range r.Holds {
		a.dp.paths.HoldInitiations(h.Peer, h.Hold)
	}
	if r.Observed {
		a.publishProbeIndex()
	}
	a.logRotation(r.Rotation)
	a.followUp(r)
}

// followUp carries out the parts of r that feed the engine again: a key
// switch, and moves of peers to their next key. They run last, from copies:
// each answer steps the engine, which reuses r.
func (a *Agent) followUp(r *engine.Ready) {
	if r.SwitchKey == nil && len(r.MoveKeys) == 0 {
		return
	}
	var sw *engine.KeySwitch
	if r.SwitchKey != nil {
		k := *r.SwitchKey
		sw = &k
	}
	moves := slices.Clone(r.MoveKeys)
	now := a.clock.Now()
	if sw != nil {
		a.switchKey(*sw, now)
	}
	for _, mv := range moves {
		if st, ok := a.peers[mv.Peer]; ok && st.nextKey != nil {
			a.movePeer(st, mv, now)
		}
	}
}

// recordRTT puts one measured round trip into the path's RTT series.
func (a *Agent) recordRTT(m engine.RTT) {
	st, ok := a.peers[m.Peer]
	if !ok || m.Index >= len(st.paths) {
		return
	}
	ps := &st.paths[m.Index]
	if !ps.hasRTT {
		ps.rtt, ps.hasRTT = a.metrics.RTTObserverFor(m.Peer, m.Path), true
	}
	ps.rtt.Observe(m.RTT)
}

// recordSwitch logs a path selection, keeps it in the event log and the
// metrics: the switch, which path is active, whether the peer is
// reachable.
func (a *Agent) recordSwitch(peer, from, to, reason string, at time.Time) {
	a.events.add(status.Event{At: status.At(at), Peer: peer, From: from, To: to, Reason: reason})
	a.metrics.Switch(peer, from, to, reason)
	a.log.Info("path switch", "peer", peer, "from", from, "to", to, "reason", reason)
	st, ok := a.peers[peer]
	if !ok {
		return
	}
	if to == "" {
		a.metrics.PeerReachable(peer, false)
		return
	}
	active := pathIndex(st, to)
	if active < 0 {
		return
	}
	for i, p := range st.cfg.Paths {
		a.metrics.PathActive(peer, p.Name, i == active)
	}
	a.metrics.PeerReachable(peer, true)
}

// setRoutes points a peer's routes into the mesh while it is reachable.
func (a *Agent) setRoutes(rt engine.Route) {
	st, ok := a.peers[rt.Peer]
	if !ok || a.dp.routes == nil {
		return
	}
	if err := a.dp.routes.SetPeer(rt.Peer, st.cfg.Prefixes, rt.Reachable); err != nil {
		a.log.Error("updating routes", "peer", rt.Peer, "reachable", rt.Reachable, "err", err)
	}
}

// facts is what the engine reads of the data plane while it steps.
type facts struct{ a *Agent }

// LastRx is the arrival of the latest authenticated data over the path, as
// the Bind timed it.
func (f facts) LastRx(peer string, observed, addr netip.AddrPort) time.Time {
	return f.a.dp.paths.LastRxFrom(peer, observed, addr)
}

// LastRequest is when the peer's latest fresh probe request arrived over
// the path (peerrequest.go).
func (f facts) LastRequest(peer string, observed, addr netip.AddrPort) time.Time {
	if idx := f.a.probes.Load(); idx != nil {
		return idx.reqs[peer].last(observed, addr)
	}
	return time.Time{}
}

// LastHandshake is when the peer's current WireGuard session was made.
func (f facts) LastHandshake(peer string) time.Time {
	st, ok := f.a.peers[peer]
	if !ok {
		return time.Time{}
	}
	return f.a.lastHandshake(st)
}

var _ engine.Facts = facts{}
