package health

import "time"

// Demand mode, after BFD's (RFC 5880 6.6): authenticated traffic that
// arrived over a path is evidence of it just as a probe answer is, so while
// a path carries traffic from the peer, that traffic replaces the path's
// probes. The shell asks Demand about every probe Due returned, with the
// arrival time of the latest authenticated data over the path, and sends
// only the probes Demand keeps.
//
// Detection is unchanged for a path carrying traffic: the deadline is
// always DetectMultiplier x interval after the last evidence, traffic or
// answer, so a cut is still detected within the detect time of its last
// packet. What changes is the margin when traffic stops on a healthy path:
// probing resumes at the first probe time more than demandFresh after the
// last packet, so the DetectMultiplier x interval before the deadline
// hold DetectMultiplier-1 probes instead of DetectMultiplier (at the
// defaults two probes, so one lost probe is still tolerated).

// demandFresh, as a fraction of the path's interval: a probe is replaced
// only by traffic that arrived within the last half interval. Older traffic
// would leave too few probes between the end of the traffic and the
// deadline (see above).
const demandFreshDiv = 2

// demandRefresh: at most this many probes in a row are replaced by traffic;
// the next one is sent anyway, so that the RTT and loss estimates of a busy
// path stay fresh (one probe a second on an active path at the defaults,
// instead of ten) and the selector's cost comparisons still hold.
const demandRefresh = 9

// Demand decides about probe p, which Due just returned, at now. lastRx is
// when the latest authenticated WireGuard data arrived over the path (zero:
// none known); it is recorded as passive evidence (OnPassive). Demand
// reports true when that traffic replaces the probe: the probe is
// withdrawn (not outstanding, not counted in ProbesSent, counted in
// Suppressed) and the shell must not send it. A probe of a down path is
// never replaced: only answers bring a path up.
func (m *Monitor) Demand(p Probe, lastRx, now time.Time) bool {
	q, ok := m.paths[p.ID]
	if !ok {
		return false
	}
	if !lastRx.IsZero() && !lastRx.After(now) {
		q.det.OnPassive(lastRx, q.span())
	}
	fresh := !lastRx.IsZero() && now.Sub(lastRx) < q.interval()/demandFreshDiv
	if !q.det.Up() || !fresh || q.quiet >= demandRefresh {
		q.quiet = 0
		m.reschedule(q)
		return false
	}
	for i := range q.nOut {
		if q.out[i].nonce == p.Nonce {
			q.nOut--
			q.out[i] = q.out[q.nOut]
			q.sent--
			q.quiet++
			q.suppressed++
			break
		}
	}
	m.reschedule(q)
	return true
}

// idlePeerSlowdown: the up paths of an idle peer, active or standby, are
// probed at this multiple of IdleInterval (every 2 s at the defaults, so a
// dead one is detected within DetectMultiplier x 2 s = 6 s, still below
// the ~10 s of a Liqo gateway). Nothing of the peer's is in flight
// meanwhile, and most peers of a relay with many peers are idle most of
// the time: their probes are most of its probing (the scale target: 1000
// paths under 5 % of a core). Down paths keep IdleInterval, so a repaired path
// comes back up as fast as a busy peer's. The first packet makes the peer
// busy again (SetIdle(peer, false)): every path of it is probed at once
// and at the busy rates from then on.
const idlePeerSlowdown = 4

// SetIdle marks peer as idle (no traffic to or from it lately) or busy.
// Every up path of an idle peer, its active one included, is probed at
// idlePeerSlowdown x IdleInterval, so a dead one is detected within
// DetectMultiplier times that (6 s at the defaults) instead of 300 ms
// (active) or 1.5 s (standby). A peer turned busy has every path probed at
// the next Due, and its detect times shrink back as on SetActive: without
// evidence, the active path is down a full short detect time after
// SetIdle(peer, false) at the latest, a standby path a full standby detect
// time after it.
func (m *Monitor) SetIdle(peer string, idle bool) {
	e, ok := m.peers[peer]
	if !ok || e.idle == idle {
		return
	}
	e.idle = idle
	for _, p := range e.list {
		p.retime = true
		if !idle {
			p.next = asap
		}
		m.reschedule(p)
	}
}

// Idle reports whether peer is marked idle.
func (m *Monitor) Idle(peer string) bool {
	e, ok := m.peers[peer]
	return ok && e.idle
}

// suspectDiv: a path is suspect once it has had no evidence for half its
// detect time plus its smoothed RTT, i.e. at least one answer is overdue at
// the defaults (150 ms + RTT without evidence, where a healthy path has one
// every 100 ms + RTT).
const suspectDiv = 2

// Suspect reports whether path id is up but overdue: detection is in
// progress, and the path will be declared down at its deadline unless
// evidence arrives. Redundant sending in auto mode duplicates traffic
// while the active path is suspect.
func (m *Monitor) Suspect(id PathID, now time.Time) bool {
	p, ok := m.paths[id]
	if !ok || !p.det.Up() {
		return false
	}
	return now.Sub(p.det.lastEv) > p.detect()/suspectDiv+p.est.SRTT()
}
