package agent

import (
	"bytes"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/status"
)

// step runs the pure machines up to now and acts on what they decide:
// replies queued for this wake are handled (replyq.go), probes due are
// sent, path transitions are fed to the selector, and the selector's
// events move traffic. Last, it records when the owner will wake next.
func (a *Agent) step(now time.Time) {
	a.takeLazy()
	// At the end of the step, as Run arms its timer then.
	defer func() { a.planWake(a.clock.Now()) }()
	a.dueBuf = a.mon.Due(now, a.dueBuf[:0])
	sent := 0
	for _, p := range a.dueBuf {
		// One lookup of the path for both (many per wake on the grid).
		if st, i := a.probePath(p.ID); st != nil {
			if a.replacedByTraffic(p, st, i, now) {
				continue
			}
			a.sendProbeOn(p, st, i)
		}
		a.dueBuf[sent] = p
		sent++
	}
	a.flushProbes()
	a.reportSendDelay(a.dueBuf[:sent])
	a.transBuf = a.mon.Tick(now, a.transBuf[:0])
	for _, t := range a.transBuf {
		st, ok := a.peers[t.ID.Peer]
		if !ok {
			continue
		}
		i := st.indexOfSlot(t.ID.Path)
		if i < 0 {
			continue
		}
		path := st.cfg.Paths[i].Name
		a.log.Info("path state", "peer", t.ID.Peer, "path", path, "up", t.Up)
		a.metrics.PathUp(t.ID.Peer, path, t.Up)
		a.observe(st, i, now)
		a.updateRedundancy(st, now, false) // the second-best path may have changed
	}
	for _, ev := range a.sel.Tick(now) {
		a.act(ev, now)
	}
	a.stepRotation(now)
}

// act carries out one selection decision.
func (a *Agent) act(ev failover.Event, now time.Time) {
	st, ok := a.peers[ev.Peer]
	if !ok {
		return
	}
	a.events.add(status.Event{At: status.At(ev.At), Peer: ev.Peer, From: ev.From, To: ev.To, Reason: string(ev.Reason)})
	a.metrics.Switch(ev.Peer, ev.From, ev.To, string(ev.Reason))
	a.log.Info("path switch", "peer", ev.Peer, "from", ev.From, "to", ev.To, "reason", string(ev.Reason))
	wasReachable := st.reachable
	if ev.To == "" {
		st.reachable = false
		a.metrics.PeerReachable(ev.Peer, false)
	} else {
		i := pathIndex(st, ev.To)
		if i < 0 {
			return
		}
		old := st.active
		st.active = i
		st.reachable = true
		second := secondIndex(st)
		if second == i {
			second = -1
		}
		if wasReachable {
			a.steer(st, old, secondIndex(st), i, second)
		} else {
			st.moveGap = 0
			a.dp.paths.Move(ev.Peer, i, second, 0) // nothing in flight to overtake
		}
		a.mon.SetActive(st.pathID(old), false)
		a.mon.SetActive(st.pathID(st.active), true)
		for i, p := range st.cfg.Paths {
			a.metrics.PathActive(ev.Peer, p.Name, i == st.active)
		}
		a.metrics.PeerReachable(ev.Peer, true)
	}
	a.updateRedundancy(st, now, troubleSwitch(ev.Reason))
	if wasReachable != st.reachable && a.dp.routes != nil {
		if err := a.dp.routes.SetPeer(ev.Peer, st.cfg.Prefixes, st.reachable); err != nil {
			a.log.Error("updating routes", "peer", ev.Peer, "reachable", st.reachable, "err", err)
		}
	}
	switch {
	case st.reachable && !st.started:
		// The first working path: start the session now (and only now, so
		// that the first initiation does not go down a dead path and wait
		// for WireGuard's 5 s retry).
		a.kick(st, st.hsReason, false, now)
	case !wasReachable && st.reachable:
		// Coming back from all-down: if WireGuard's session went stale while
		// no path worked, don't wait for its 5 s retry timer.
		if last := a.lastHandshake(st); last.IsZero() || now.Sub(last) > staleSession {
			a.kick(st, "recovered", true, now)
		}
	}
}

// staleSession is how old a handshake may be before a recovering peer gets a
// fresh one at once. WireGuard rekeys after 120 s and rejects keys after
// 180 s; a session older than that is of no use.
const staleSession = 120 * time.Second

// handshakeDeferral is how long the relay with the larger public key leaves
// a handshake to its peer. Both relays usually see a path come up (or a
// restart) within one probe interval of each other; if both initiated at
// once, each would drop its own pending handshake on receiving the other's,
// and both would wait for WireGuard's 5 s retry. One second is several
// probe intervals and still far below that retry.
const handshakeDeferral = time.Second

// deferredHandshake is a handshake left to the peer, done by us if no
// session has formed by then.
type deferredHandshake struct {
	at, since time.Time
	reason    string
	expire    bool
}

// kick starts a handshake with st: now when we are the designated
// initiator (the smaller public key), else after handshakeDeferral unless
// the peer's own initiation has formed a session by then.
func (a *Agent) kick(st *peerState, reason string, expire bool, now time.Time) {
	ours := a.cfg.PrivateKey.PublicKey() // a.cfg holds the running key, also after a rotation
	if bytes.Compare(ours[:], st.cfg.PublicKey[:]) < 0 {
		a.startKeepalive(st)
		a.handshake(st, reason, expire)
		return
	}
	st.deferred = &deferredHandshake{at: now.Add(handshakeDeferral), since: now, reason: reason, expire: expire}
}

// startKeepalive turns the peer's persistent keepalive on, once. It is held
// back until then because wireguard-go sends a keepalive (and so a
// handshake) the moment it is set.
func (a *Agent) startKeepalive(st *peerState) {
	if st.started {
		return
	}
	st.started = true
	if st.cfg.PersistentKeepalive == 0 {
		return
	}
	if err := a.dp.wg.IpcSet(keepaliveUAPI(&st.cfg)); err != nil {
		a.log.Error("setting keepalive", "peer", st.cfg.Name, "err", err)
	}
}

// runDeferred carries out deferred handshakes whose peer did not start a
// session in time.
func (a *Agent) runDeferred(st *peerState, now time.Time) {
	d := st.deferred
	if d == nil || now.Before(d.at) {
		return
	}
	st.deferred = nil
	fresh := false
	if last := a.lastHandshake(st); !last.IsZero() {
		// The peer's initiation made a fresh session; or, when the kick
		// only asked for a session (startup, peer added), the peer had
		// already made one before our path came up. Initiating again
		// would be redundant, and wireguard-go drops an initiation within
		// 5 s of the response it sent for that session anyway.
		fresh = !last.Before(d.since) || (!d.expire && now.Sub(last) < staleSession)
	}
	a.startKeepalive(st)
	if !fresh {
		a.handshake(st, d.reason, d.expire)
	}
}

func failoverObservation(s health.PathStats) failover.Observation {
	return failover.Observation{Up: s.State == health.Up, SRTT: s.SRTT, Loss: s.Loss, LastRTT: s.LastRTT}
}

// housekeep runs every housekeepingInterval: passive evidence from the
// Bind's counters, byte counters, probe loss and gauges.
func (a *Agent) housekeep(now time.Time) {
	// Packets counted since the last round arrived some time after it: date
	// the evidence at the last round, the earliest they can have arrived.
	// Dating it now would stretch a dead path's life by up to one round
	// beyond the detection time.
	evidenceAt := a.lastHousekeep
	a.lastHousekeep = now
	for name, st := range a.peers {
		a.runDeferred(st, now)
		a.releaseHold(st, now)
		// One Bind lookup per peer and round, into one buffer: with many
		// peers this loop is most of the round.
		c, _ := a.dp.paths.Counters(name, a.srcBuf)
		a.srcBuf = c.Sources
		var rxBytes, rxPackets uint64
		for _, src := range c.Sources {
			rxBytes += src.Bytes
			rxPackets += src.Packets
		}
		newRx(st.rxSeen, c.Sources, func(addr netip.AddrPort) {
			if i := st.pathFor(addr); i >= 0 && !evidenceAt.IsZero() {
				a.mon.OnPassive(st.pathID(i), evidenceAt)
			}
		})
		a.publishPeerBytes(st, rxBytes, c.TxBytes)
		a.trackIdle(st, c.TxData, rxPackets, now)
		a.updateRedundancy(st, now, false)
	}
	a.publishDNSView()
	a.publishPathStats()
	c := a.dp.pipe.Counters()
	a.metrics.Pipeline(metrics.PipelineCounters{
		DroppedBadSource:      c.DroppedBadSource,
		DroppedBadDestination: c.DroppedBadDest,
		DroppedMalformed:      c.DroppedMalformed,
		TranslatedRX:          c.TranslatedRX,
		TranslatedTX:          c.TranslatedTX,
		MSSClamped:            c.MSSClamped,
	})
}

// pathFor finds the path whose traffic arrives from src: the address its
// probe answers came from (NAT), else its configured endpoint.
func (st *peerState) pathFor(src netip.AddrPort) int {
	for i, p := range st.paths {
		if p.observed == src {
			return i
		}
	}
	for i, p := range st.paths {
		if p.addr == src {
			return i
		}
	}
	return -1
}

// checkRules repairs our policy rules and routes if another agent removed
// them or put rules ahead of ours.
func (a *Agent) checkRules() {
	if a.dp.routes == nil {
		return
	}
	repaired, err := a.dp.routes.EnsureRules()
	if err != nil {
		a.log.Error("checking policy rules", "err", err)
		return
	}
	if repaired {
		a.log.Warn("policy rules or routes were changed by someone else: restored")
	}
}
