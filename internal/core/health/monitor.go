package health

import "time"

// PathID names one path to one peer: Peer is the peer relay's name as in the
// config, Path the index of the path in our config's path list for that
// peer (the same index travels on the wire as the probe's path id, so a
// uint16 in practice). A struct key costs one string hash per lookup, which
// measures well below the cost of the probe's MAC; a compact numeric id was
// not worth the extra mapping in the shell.
type PathID struct {
	Peer string
	Path int
}

// maxOutstanding bounds the unanswered probes remembered per path. With the
// expiry below (2 x detect time = 6 intervals, and intervals of at least 75%
// of nominal) at most 9 are ever pending; 16 leaves room for settings
// changes. When full, the oldest is counted as lost.
const maxOutstanding = 16

// expiryDetects: an outstanding probe is counted lost after this many detect
// times. Two detect times (600 ms by default) is far beyond any sane RTT, so
// a late answer is practically never miscounted, and the bound keeps the
// per-path table small.
const expiryDetects = 2

// scheduleJitter: each interval is drawn uniformly from [75%, 100%] of the
// nominal one, as BFD does (RFC 5880 6.8.7), so thousands of paths started
// together spread out instead of probing in bursts. Never above 100%, so
// the detect time still spans DetectMultiplier probes.
const scheduleJitterDiv = 4 // up to 1/4 of the interval is taken off

// probeGrid: every probe time is rounded down to a multiple of this grid
// (or of an eighth of the path's interval, if finer), so that the probes of
// many paths fall due at the same instants and the shell sends them in one
// wake instead of one wake each: with 1000 paths, at most 200 wakes per
// second for probes instead of one per probe. Rounding down only ever
// shortens an interval (to 70-100% of nominal at the default 100 ms), so
// the detect time still spans DetectMultiplier probes, and the schedule
// jitter above still spreads the probes of paths started together over
// the grid's slots.
const probeGrid = 5 * time.Millisecond

// State of a path as seen by the detector.
type State uint8

const (
	// Down: no evidence for the detect time, or never up yet.
	Down State = iota
	// Up: answers are arriving.
	Up
)

func (s State) String() string {
	if s == Up {
		return "up"
	}
	return "down"
}

// Probe is a request the shell must send now.
type Probe struct {
	ID    PathID
	Nonce uint64
	// Due is when the probe was due by the schedule (the time Due was
	// called, for a probe due at once): the shell's send time minus Due is
	// how late it went out.
	Due time.Time
}

// Transition is a change of a path's state. At is when it happened: for a
// down transition, the deadline that passed (which may be a little before the
// Tick that reports it).
type Transition struct {
	ID PathID
	Up bool
	At time.Time
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

// asap is the wake time of work due at the next Due or Tick, whatever its
// now. It is not the zero time, so that NextDeadline's zero can mean "no
// paths".
var asap = time.Unix(0, 0)

type pending struct {
	nonce   uint64
	sent    time.Time
	expires time.Time
}

type path struct {
	id     PathID
	peer   *peerEntry
	s      Settings
	active bool
	retime bool // active, idle or settings changed: adapt the detector at the next advance

	est Estimator
	det Detector

	next    time.Time // next probe; zero: at the next advance
	out     [maxOutstanding]pending
	nOut    int
	sent    uint64
	lost    uint64
	wake    time.Time
	heapIdx int
	changed bool // in Monitor.changed: its loss or lost count moved (StatsChanged)

	// Demand mode (demand.go).
	quiet      int    // consecutive probes replaced by traffic
	suppressed uint64 // probes replaced by traffic or requests, in all
	reqQuiet   int    // consecutive probes replaced by the peer's requests (peerrequest.go)
}

// interval is the path's current probe interval: Interval while it is
// active and its peer carries traffic; idlePeerSlowdown x IdleInterval for
// an up path of an idle peer (SetIdle, demand.go); IdleInterval otherwise
// (a standby path of a busy peer, or a down path, so that a repaired path
// comes back up as fast whether its peer is idle or not).
func (p *path) interval() time.Duration {
	switch {
	case p.active && !p.peer.idle:
		return p.s.Interval
	case p.peer.idle && p.det.Up():
		return p.s.IdleInterval * idlePeerSlowdown
	}
	return p.s.IdleInterval
}

func (p *path) detect() time.Duration {
	return p.interval() * time.Duration(p.s.DetectMultiplier)
}

// span is how long the path may go without evidence before it is down: the
// detect time plus the jitter margin (stall.go), so that answers spread by
// the path's own delay variation are not taken for silence.
func (p *path) span() time.Duration {
	d := p.detect()
	return d + DeadlineMargin(p.est.Jitter(), d)
}

// computeWake sets p.wake to the earliest instant p has time-driven work.
func (p *path) computeWake() {
	w := p.next
	if p.retime {
		w = asap
	}
	if d := p.det.Deadline(); !d.IsZero() && d.Before(w) {
		w = d
	}
	for i := range p.nOut {
		if p.out[i].expires.Before(w) {
			w = p.out[i].expires
		}
	}
	p.wake = w
}

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

func (m *Monitor) reschedule(p *path) {
	p.computeWake()
	m.heap.fix(p.heapIdx)
}

// advance does all time-driven work due at or before now.
func (m *Monitor) advance(now time.Time) {
	for len(m.heap) > 0 && !m.heap[0].wake.After(now) {
		p := m.heap[0]
		m.process(p, now)
		p.computeWake()
		m.heap.fix(0)
	}
}

func (m *Monitor) process(p *path, now time.Time) {
	if p.retime {
		p.retime = false
		p.det.Retime(now, p.span(), p.est.SRTT())
	}
	// Expire unanswered probes.
	for i := 0; i < p.nOut; {
		if p.out[i].expires.After(now) {
			i++
			continue
		}
		p.loseAt(i)
		m.touch(p)
	}
	if p.det.Check(now) {
		m.trans = append(m.trans, Transition{ID: p.id, Up: false, At: p.det.LastChange()})
		if p.peer.idle {
			// Its slow schedule ends: a down path is probed every
			// IdleInterval, so that it comes back up as fast as any.
			p.next = asap
		}
	}
	if !p.next.After(now) {
		m.send(p, now)
	}
}

func (p *path) loseAt(i int) {
	p.est.OnLoss()
	p.lost++
	p.nOut--
	p.out[i] = p.out[p.nOut]
}

// forgetOutage runs when the path comes back up on the answer to a probe
// sent at sent. Loss is to describe the path while it is up: the losses of
// the outage are already accounted for by the down state and by flap
// dampening, and carried over they would make a repaired path look lossy
// for a whole window (32 idle probes, ~14 s), delaying the failback to it.
// So the loss window restarts, and the probes still outstanding from before
// sent (lost in the outage) are counted in ProbesLost but not in the window.
func (p *path) forgetOutage(sent time.Time) {
	for i := 0; i < p.nOut; {
		if !p.out[i].sent.Before(sent) {
			i++
			continue
		}
		p.lost++
		p.nOut--
		p.out[i] = p.out[p.nOut]
	}
	p.est.ResetLoss()
	p.est.RestartWindow()
}

func (m *Monitor) send(p *path, now time.Time) {
	if p.nOut == maxOutstanding {
		oldest := 0
		for i := 1; i < p.nOut; i++ {
			if p.out[i].sent.Before(p.out[oldest].sent) {
				oldest = i
			}
		}
		p.loseAt(oldest)
		m.touch(p)
	}
	p.peer.nonce++
	p.out[p.nOut] = pending{
		nonce:   p.peer.nonce,
		sent:    now,
		expires: now.Add(expiryDetects * p.detect()),
	}
	p.nOut++
	p.sent++
	due := p.next
	if due.Equal(asap) || due.After(now) {
		due = now
	}
	m.probes = append(m.probes, Probe{ID: p.id, Nonce: p.peer.nonce, Due: due})

	iv := p.interval()
	if j := uint64(iv / scheduleJitterDiv); j > 0 {
		// Modulo bias is below j/2^64: irrelevant for a schedule.
		iv -= time.Duration(m.rnd.Uint64() % (j + 1))
	}
	p.next = onGrid(now.Add(iv), p.interval())
}

// onGrid rounds t down to the probe grid (probeGrid, or an eighth of the
// interval iv if finer; slowGrid for intervals of slowGridFrom or more).
// The result is after t-iv/8, so never before the previous probe.
func onGrid(t time.Time, iv time.Duration) time.Time {
	g := min(probeGrid, iv/8)
	if iv >= slowGridFrom {
		g = slowGrid
	}
	if g <= 0 {
		return t
	}
	// Subtract the remainder rather than return t.Truncate(g): Truncate
	// drops the monotonic clock reading, and the schedule must not follow
	// wall clock steps.
	return t.Add(-t.Sub(t.Truncate(g)))
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

// Due returns, appended to out, the probes to send now, and records them as
// outstanding. Call it at or after NextDeadline.
func (m *Monitor) Due(now time.Time, out []Probe) []Probe {
	m.advance(now)
	out = append(out, m.probes...)
	clear(m.probes)
	m.probes = m.probes[:0]
	return out
}

// Tick returns, appended to out, the transitions since the last Tick: those
// found by OnReply and the detection deadlines that passed by now.
func (m *Monitor) Tick(now time.Time, out []Transition) []Transition {
	m.advance(now)
	out = append(out, m.trans...)
	clear(m.trans)
	m.trans = m.trans[:0]
	return out
}

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

// NextDeadline is the earliest instant at which Due or Tick has time-driven
// work; the shell sleeps until then (or until a datagram arrives). A time
// in the past means work is due at once (e.g. a path was just added). It is
// the zero time only when there are no paths: nothing to wait for.
// Transitions queued by OnReply are not time-driven: call Tick after
// OnReply.
func (m *Monitor) NextDeadline() time.Time {
	if len(m.heap) == 0 {
		return time.Time{}
	}
	return m.heap[0].wake
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
