package health

import "time"

// Monitor schedules probes over many paths and turns their answers into
// up/down transitions. It is a pure state machine: the shell calls Due and
// Tick at (or after) NextDeadline, sends the probes Due returns, feeds
// answers to OnReply and authenticated WireGuard traffic to OnPassive, and
// hands Tick's transitions to the failover selector.
//
// Nonces come from one counter per peer (the sender's counter on the wire
// for that receiver). Every request to a peer takes its nonce from that
// peer's counter: scheduled probes on any of its paths (Due) and requests
// outside the schedule such as `relay ping` (NextNonce). The peer keeps one
// replay window per sender and epoch, so a second counter for the same
// peer (say, with a high bit set) would move that window far ahead of the
// probes and make every later probe look like a replay; and one counter
// shared by all peers would space the nonces one peer receives by the
// requests to all the others, so that its 2048-nonce window would span
// less time the more peers we have (see newPeer for where a counter
// starts).
//
// A Monitor is not safe for concurrent use: the shell's single owner
// goroutine drives it. In steady state none of its methods allocate.
type Monitor struct {
	rnd    Rand
	paths  map[PathID]*path
	heap   pathHeap
	floor  uint64       // where a new peer's counter starts (newPeer)
	probes []Probe      // queued for Due
	trans  []Transition // queued for Tick
	epochs map[string]uint64
	peers  map[string]*peerEntry
	// changed lists the paths whose loss estimate or lost-probe count may
	// have moved since the last StatsChanged (statschanged.go).
	changed []*path
}

// peerEntry is what the monitor keeps per peer while it has paths.
type peerEntry struct {
	paths int     // configured paths to the peer
	nonce uint64  // the last nonce sent to the peer
	idle  bool    // no traffic lately: its active path is probed at IdleInterval
	list  []*path // the peer's paths, for SetIdle
}

// Rand is the randomness a Monitor needs, for the schedule jitter and the
// initial nonce. Both *math/rand.Rand and *math/rand/v2.Rand satisfy it;
// seed it in tests, and give it a random seed in production (predictable
// nonces are harmless, as replies are authenticated, but a random start
// keeps nonces of successive boots apart).
type Rand interface{ Uint64() uint64 }

// NewMonitor returns an empty Monitor driven by rnd.
func NewMonitor(rnd Rand) *Monitor {
	return &Monitor{
		rnd:    rnd,
		paths:  make(map[PathID]*path),
		floor:  rnd.Uint64() >> 2, // leave 2^62 nonces before wrap-around
		epochs: make(map[string]uint64),
		peers:  make(map[string]*peerEntry),
	}
}

// newPeer returns the entry of peer, creating it with its first path.
//
// A new counter starts at the floor: the random start drawn at NewMonitor,
// raised to the last nonce of every peer removed since. A peer removed and
// added again within one boot (a reload) keeps its replay window on the
// other side, at the newest nonce it saw from us; starting above every
// nonce ever sent to any removed peer keeps the new requests ahead of that
// window, without remembering removed peers by name.
func (m *Monitor) newPeer(peer string) *peerEntry {
	e, ok := m.peers[peer]
	if !ok {
		e = &peerEntry{nonce: m.floor}
		m.peers[peer] = e
	}
	e.paths++
	return e
}

// normalize fills zero fields of s from the defaults.
func normalize(s Settings) Settings {
	d := DefaultSettings()
	if s.Interval <= 0 {
		s.Interval = d.Interval
	}
	if s.IdleInterval <= 0 {
		s.IdleInterval = s.Interval * (d.IdleInterval / d.Interval)
	}
	if s.DetectMultiplier <= 0 {
		s.DetectMultiplier = d.DetectMultiplier
	}
	if s.UpThreshold <= 0 {
		s.UpThreshold = d.UpThreshold
	}
	s.LossWindow = clampWindow(s.LossWindow)
	return s
}

// SetPath adds a path or updates its settings (zero fields take defaults).
// An existing path keeps its estimates, state and outstanding probes; if the
// settings changed, it is probed and its detector deadline adapted at the
// next Due or Tick (a changed loss window restarts the loss estimate).
// A new path is down and is probed at the next Due.
func (m *Monitor) SetPath(id PathID, s Settings) {
	s = normalize(s)
	if p, ok := m.paths[id]; ok {
		if p.s != s {
			if p.s.LossWindow != s.LossWindow {
				p.est.window = s.LossWindow
				p.est.ResetLoss() // outcomes beyond a smaller window would skew it
				m.touch(p)
			}
			p.s = s
			p.retime = true
			p.next = asap // the old schedule may be far longer than the new interval
			m.reschedule(p)
		}
		return
	}
	p := &path{id: id, peer: m.newPeer(id.Peer), s: s, est: NewEstimator(s.LossWindow), next: asap, wake: asap}
	p.peer.list = append(p.peer.list, p)
	m.paths[id] = p
	m.heap.push(p)
	m.touch(p) // its stats exist from now on
}

// RemovePath forgets a path, including queued probes and transitions.
func (m *Monitor) RemovePath(id PathID) {
	p, ok := m.paths[id]
	if !ok {
		return
	}
	m.heap.remove(p)
	delete(m.paths, id)
	if p.changed {
		m.changed = deleteFunc(m.changed, func(q *path) bool { return q == p })
	}
	p.peer.list = deleteFunc(p.peer.list, func(q *path) bool { return q == p })
	if p.peer.paths--; p.peer.paths <= 0 {
		m.floor = max(m.floor, p.peer.nonce)
		delete(m.peers, id.Peer)
		delete(m.epochs, id.Peer)
	}
	m.probes = deleteFunc(m.probes, func(q Probe) bool { return q.ID == id })
	m.trans = deleteFunc(m.trans, func(t Transition) bool { return t.ID == id })
}

func deleteFunc[T any](s []T, del func(T) bool) []T {
	out := s[:0]
	for _, v := range s {
		if !del(v) {
			out = append(out, v)
		}
	}
	clear(s[len(out):])
	return out
}

// SetActive marks a path as carrying traffic (probed every Interval) or
// standby (every IdleInterval). A path turned active is probed at the next
// Due, and its detect time shrinks without declaring it down before a full
// new detect time has passed.
func (m *Monitor) SetActive(id PathID, active bool) {
	p, ok := m.paths[id]
	if !ok || p.active == active {
		return
	}
	p.active = active
	p.retime = true
	if active {
		p.next = asap
	}
	m.reschedule(p)
}

// NextNonce takes the next nonce from peer's counter for a request the
// shell sends outside the schedule (`relay ping`), so that all requests to
// a peer share one increasing nonce sequence, as the peer's replay window
// requires. OnReply never matches it: the shell matches the answer itself.
// Nonces of different peers come from different counters and may be
// equal: the shell must tell answers apart by peer and nonce. ok is false
// when peer has no path.
func (m *Monitor) NextNonce(peer string) (nonce uint64, ok bool) {
	e, ok := m.peers[peer]
	if !ok {
		return 0, false
	}
	e.nonce++
	return e.nonce, true
}

// ObserveEpoch records the epoch seen in an authenticated message from peer
// and reports whether it differs from the previous one: the peer restarted,
// and the shell should start a WireGuard handshake at once rather than wait
// for WireGuard's own timers. The first epoch seen is not a restart. Feed it
// from replies that OnReply matched: those cannot be replays.
func (m *Monitor) ObserveEpoch(peer string, epoch uint64) (restarted bool) {
	old, seen := m.epochs[peer]
	if seen && old == epoch {
		return false
	}
	if _, known := m.peers[peer]; !known {
		return false // not a peer of ours: do not grow the map
	}
	m.epochs[peer] = epoch
	return seen
}

// PathStats is a snapshot of one path for metrics and status.
type PathStats struct {
	State       State
	Active      bool
	SRTT        time.Duration
	LastRTT     time.Duration // the latest sample, unsmoothed
	Jitter      time.Duration
	Loss        float64
	LastSuccess time.Time
	LastChange  time.Time
	ProbesSent  uint64
	ProbesLost  uint64
	// Suppressed counts probes replaced by traffic (demand mode, Demand)
	// or by the peer's requests (ReplacedByRequest); they are not in
	// ProbesSent.
	Suppressed uint64
	// RTTOutliers counts answers whose RTT entered SRTT clipped as an
	// outlier (Estimator.Clipped): mostly the relays' own scheduling
	// delays.
	RTTOutliers uint64
}

// Stats returns a snapshot of the path, or false if it is unknown.
func (m *Monitor) Stats(id PathID) (PathStats, bool) {
	p, ok := m.paths[id]
	if !ok {
		return PathStats{}, false
	}
	st := Down
	if p.det.Up() {
		st = Up
	}
	return PathStats{
		State:       st,
		Active:      p.active,
		SRTT:        p.est.SRTT(),
		LastRTT:     p.est.LastRTT(),
		Jitter:      p.est.Jitter(),
		Loss:        p.est.Loss(),
		LastSuccess: p.est.LastSuccess(),
		LastChange:  p.det.LastChange(),
		ProbesSent:  p.sent,
		ProbesLost:  p.lost,
		Suppressed:  p.suppressed,
		RTTOutliers: p.est.Clipped(),
	}, true
}
