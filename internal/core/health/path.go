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
