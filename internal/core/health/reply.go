package health

import "time"

// OnReply matches an authenticated reply against the outstanding probes of
// the path. It returns the round-trip time and true if nonce was outstanding
// (the match is consumed, so a replayed reply matches nothing), or false for
// unknown paths and unknown, answered or expired nonces, which the shell
// drops. A reply that brings the path up queues a transition for Tick.
func (m *Monitor) OnReply(id PathID, nonce uint64, now time.Time) (rtt time.Duration, ok bool) {
	p, found := m.paths[id]
	if !found {
		return 0, false
	}
	i := 0
	for ; i < p.nOut && p.out[i].nonce != nonce; i++ {
	}
	if i == p.nOut {
		return 0, false
	}
	// What StatsChanged reports on, before the answer (forgetOutage counts
	// the outage's probes lost).
	loss, lost, clipped := p.est.Loss(), p.lost, p.est.Clipped()
	sent := p.out[i].sent
	rtt = now.Sub(sent)
	p.nOut--
	p.out[i] = p.out[p.nOut]
	// The deadline counts the jitter margin with this sample in it: what
	// the path's estimates say from now on.
	after := p.est
	after.OnSuccess(rtt, now)
	d := p.detect()
	if p.det.OnAnswer(now, d+DeadlineMargin(after.Jitter(), d), p.s.UpThreshold) {
		p.forgetOutage(sent)
		m.trans = append(m.trans, Transition{ID: id, Up: true, At: now})
		p.retime = p.peer.idle // an idle peer's up path is probed slower
	}
	p.est.OnSuccess(rtt, now)
	if p.est.Loss() != loss || p.lost != lost || p.est.Clipped() != clipped {
		m.touch(p) // most answers move none of them (StatsChanged)
	}
	m.reschedule(p)
	return rtt, true
}

// OnPassive records authenticated WireGuard data received over the path at
// now: it keeps an up path up, but never brings a down path up.
func (m *Monitor) OnPassive(id PathID, now time.Time) {
	p, ok := m.paths[id]
	if !ok {
		return
	}
	p.det.OnPassive(now, p.span())
	m.reschedule(p)
}
