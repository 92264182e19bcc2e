package failover

import (
	"slices"
	"time"
)

// PathSpec names a path of a peer. Bias is added to its cost: a positive
// bias makes it a less preferred path (e.g. the consumer path, which loads
// the consumer cluster's gateway), a negative one a preferred path.
type PathSpec struct {
	Name string
	Bias time.Duration
}

// Observation is what health knows of a path: whether it is up, its smoothed
// RTT and its loss fraction (0..1).
type Observation struct {
	Up   bool
	SRTT time.Duration
	Loss float64
	// LastRTT is the latest sample, unsmoothed: only the naive selector
	// uses it (0 means unknown: it falls back to SRTT).
	LastRTT time.Duration
}

// PathInfo is a path's state for status pages and metrics.
type PathInfo struct {
	State   State
	Cost    time.Duration
	Penalty float64   // figure of merit as of the last Observe or Tick
	UpSince time.Time // zero while down
}

type pathState struct {
	spec        PathSpec
	obs         Observation
	upSince     time.Time
	betterSince time.Time // since when it beats the active path by both margins; zero if not
	merit       merit
}

type peerState struct {
	name     string
	s        Settings
	paths    []*pathState // in config order; ties in cost go to the earlier
	active   string       // "" when unreachable or never chosen
	chosen   bool         // a path was ever chosen
	leftDown string       // the path we left because it went down, for failback

	// Tick decides only for peers that may have something to decide:
	// observed (or reconfigured) since their last decision, or whose
	// deadline (a hold maturing, a dampened path reusable) has come.
	// Without either, decide would return nothing: every other rule
	// depends on observations alone. With many peers this keeps a Tick,
	// which the agent runs on every wake, from costing O(peers).
	dirty bool
	due   time.Time // zero: none
}

// Selector keeps the path choice of every peer of one relay. It is not safe
// for concurrent use: the shell's owner goroutine drives it.
type Selector struct {
	def     Settings
	peers   map[string]*peerState
	order   []string     // sorted peer names: Tick visits peers deterministically
	byOrder []*peerState // the peers of order, in that order (no map lookup per Tick)
	// lastTick is the latest Tick's now: PathInfo reports penalties as of
	// then.
	lastTick time.Time
	// due is the earliest deadline of any peer as of the latest Tick, and
	// changed whether a peer was set or observed since (Due).
	due     time.Time
	changed bool
}

// New returns a Selector whose peers use s unless SetPeer gives them their
// own settings.
func New(s Settings) *Selector {
	return &Selector{def: s, peers: make(map[string]*peerState)}
}

// SetPeer adds a peer or updates its path list and settings; the zero
// Settings{} means the Selector's own (those given to New). Paths that stay
// (by name) keep their state; new paths start down. If the active path is
// removed, the next Tick switches away from it (reason "removed").
func (s *Selector) SetPeer(peer string, paths []PathSpec, ps Settings) {
	if ps == (Settings{}) {
		ps = s.def
	}
	p, ok := s.peers[peer]
	if !ok {
		p = &peerState{name: peer}
		s.peers[peer] = p
		i, _ := slices.BinarySearch(s.order, peer)
		s.order = slices.Insert(s.order, i, peer)
		s.byOrder = slices.Insert(s.byOrder, i, p)
	}
	p.s = ps
	p.dirty = true
	s.changed = true
	old := p.paths
	p.paths = make([]*pathState, 0, len(paths))
	for _, spec := range paths {
		var st *pathState
		for _, o := range old {
			if o.spec.Name == spec.Name {
				st = o
				break
			}
		}
		if st == nil {
			st = &pathState{}
		}
		st.spec = spec
		p.paths = append(p.paths, st)
	}
	if p.leftDown != "" && p.path(p.leftDown) == nil {
		p.leftDown = ""
	}
}

// RemovePeer forgets a peer. No event is emitted: the shell tears down the
// peer's routes itself.
func (s *Selector) RemovePeer(peer string) {
	if _, ok := s.peers[peer]; !ok {
		return
	}
	delete(s.peers, peer)
	if i, found := slices.BinarySearch(s.order, peer); found {
		s.order = slices.Delete(s.order, i, i+1)
		s.byOrder = slices.Delete(s.byOrder, i, i+1)
	}
}

func (p *peerState) path(name string) *pathState {
	for _, st := range p.paths {
		if st.spec.Name == name {
			return st
		}
	}
	return nil
}

// Observe records the latest observation of a path at now. A transition
// from up to down counts as a flap for dampening; the choice itself is made
// by the next Tick. Unknown peers and paths are ignored.
func (s *Selector) Observe(peer, path string, o Observation, now time.Time) {
	p, ok := s.peers[peer]
	if !ok {
		return
	}
	st := p.path(path)
	if st == nil {
		return
	}
	was := st.obs.Up
	st.obs = o
	p.dirty = true
	s.changed = true
	switch {
	case was && !o.Up:
		st.upSince = time.Time{}
		st.betterSince = time.Time{}
		if p.dampening() {
			st.merit.flap(p.s.Dampening, now)
		}
	case !was && o.Up:
		st.upSince = now
	}
	p.refreshBetter(now)
}

func (p *peerState) dampening() bool { return p.s.Dampening.Enabled && !p.s.naive() }

// usable reports whether a path may carry traffic.
func (p *peerState) usable(st *pathState) bool {
	return st.obs.Up && !(p.dampening() && st.merit.suppressed)
}

func (p *peerState) cost(st *pathState) time.Duration {
	if p.s.naive() {
		// The comparison baseline: the latest sample alone, as a selector
		// without smoothing, loss or margins sees it.
		rtt := st.obs.LastRTT
		if rtt == 0 {
			rtt = st.obs.SRTT
		}
		return rtt + st.spec.Bias
	}
	return st.obs.SRTT + st.spec.Bias + time.Duration(float64(p.s.LossPenalty)*st.obs.Loss)
}

// beats reports whether c is better than the active path a by more than
// both margins.
func (p *peerState) beats(c, a *pathState) bool {
	cc, ca := p.cost(c), p.cost(a)
	gain := ca - cc
	return gain > p.s.BetterMargin && float64(gain) > p.s.BetterMarginRatio*float64(ca)
}

// refreshBetter starts or stops the better-timers of the standby paths
// against the current active path.
func (p *peerState) refreshBetter(now time.Time) {
	a := p.path(p.active)
	for _, st := range p.paths {
		if p.s.naive() || a == nil || st == a || !p.usable(st) || !p.beats(st, a) {
			st.betterSince = time.Time{}
		} else if st.betterSince.IsZero() {
			st.betterSince = now
		}
	}
}

// best returns the usable path of lowest cost, the earliest in config order
// on ties; nil if none.
func (p *peerState) best() *pathState {
	var b *pathState
	for _, st := range p.paths {
		if p.usable(st) && (b == nil || p.cost(st) < p.cost(b)) {
			b = st
		}
	}
	return b
}

// Tick makes the decisions due at now and returns them (nil if none).
func (s *Selector) Tick(now time.Time) []Event {
	var evs []Event
	if now.After(s.lastTick) {
		s.lastTick = now
	}
	s.due, s.changed = time.Time{}, false
	for _, p := range s.byOrder {
		if p.dirty || (!p.due.IsZero() && !now.Before(p.due)) {
			ev, ok := p.decide(now)
			p.dirty = false
			p.due = p.deadline()
			if ok {
				evs = append(evs, ev)
			}
		}
		s.due = earlier(s.due, p.due)
	}
	return evs
}

// Due is when the selector next needs a Tick, in constant time: the
// earliest deadline as of the latest Tick (zero: none), or, when a peer
// was set or observed since, the latest Tick's time, which is due at
// once. NextDeadline computes the exact deadline instead, visiting every
// path; a shell that ticks after every batch of observations, as the
// relay's does, wakes at the same times with Due.
func (s *Selector) Due() time.Time {
	if s.changed {
		return s.lastTick
	}
	return s.due
}

// Active returns the path carrying the peer's traffic, and false if the
// peer is unknown or unreachable.
func (s *Selector) Active(peer string) (path string, reachable bool) {
	p, ok := s.peers[peer]
	if !ok || p.active == "" {
		return "", false
	}
	return p.active, true
}

// PathState returns the state of a path (Down for unknown ones).
func (s *Selector) PathState(peer, path string) State {
	info, _ := s.PathInfo(peer, path)
	return info.State
}

// Penalty returns the flap-dampening figure of merit of a path as of the
// last Observe or Tick (0 for unknown paths).
func (s *Selector) Penalty(peer, path string) float64 {
	info, _ := s.PathInfo(peer, path)
	return info.Penalty
}

// PathInfo returns the state, cost, dampening penalty and up-since time of a
// path, and false if the peer or path is unknown.
func (s *Selector) PathInfo(peer, path string) (PathInfo, bool) {
	p, ok := s.peers[peer]
	if !ok {
		return PathInfo{}, false
	}
	st := p.path(path)
	if st == nil {
		return PathInfo{}, false
	}
	// The figure as of the last Tick, which may not have decided for this
	// peer (Tick skips peers with nothing to decide): decay a copy.
	m := st.merit
	if p.dampening() {
		m.decay(p.s.Dampening, s.lastTick)
	}
	info := PathInfo{Cost: p.cost(st), Penalty: m.value, UpSince: st.upSince}
	switch {
	case p.dampening() && m.suppressed:
		info.State = Dampened
	case st.obs.Up:
		info.State = Up
	}
	return info, true
}

// NextDeadline is the earliest instant at which a Tick may decide something
// without new observations: a better-hold or failback-hold maturing, or a
// dampened path decaying to reuse. Zero if there is none. The shell may
// also simply Tick after every batch of observations and on a fixed beat.
func (s *Selector) NextDeadline() time.Time {
	var next time.Time
	for _, p := range s.byOrder {
		next = earlier(next, p.deadline())
	}
	return next
}

// earlier returns the earlier of a and b, where zero means none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// deadline is the peer's part of NextDeadline; zero if none.
func (p *peerState) deadline() time.Time {
	var next time.Time
	for _, st := range p.paths {
		if !st.betterSince.IsZero() {
			t := st.betterSince.Add(p.s.BetterHold)
			if st.spec.Name == p.leftDown {
				if f := st.upSince.Add(p.s.FailbackHold); f.After(t) {
					t = f
				}
			}
			next = earlier(next, t)
		}
		if p.dampening() {
			next = earlier(next, st.merit.reuseAt(p.s.Dampening))
		}
	}
	return next
}
