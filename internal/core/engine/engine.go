package engine

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Options configure an Engine.
type Options struct {
	// Self is our running public key (KeySwitched changes it).
	Self keys.Public
	// Rand jitters the probe schedule; seed it for reproducible runs.
	Rand health.Rand
	// Selection are the selector's defaults, for peers set without their
	// own.
	Selection failover.Settings
	// Facts is read while stepping; nil knows nothing (NoFacts).
	Facts Facts
}

// Engine is the decision state of one relay. One goroutine owns it.
type Engine struct {
	self  keys.Public
	facts Facts
	mon   *health.Monitor
	sel   *failover.Selector
	peers map[string]*peer
	rot   *rotation // our staged next key; nil when none

	// lastHousekeep dates passive evidence (Housekeep).
	lastHousekeep time.Time
	// observed is set when the index of path addresses changed in this
	// step.
	observed bool

	ready      Ready
	dueBuf     []health.Probe
	transBuf   []health.Transition
	changedBuf []health.PathID
}

// New returns an engine with no peers.
func New(o Options) *Engine {
	if o.Facts == nil {
		o.Facts = NoFacts{}
	}
	return &Engine{
		self:  o.Self,
		facts: o.Facts,
		mon:   health.NewMonitor(o.Rand),
		sel:   failover.New(o.Selection),
		peers: map[string]*peer{},
	}
}

// Step feeds one input at now and returns what the shell must do. The
// Ready is valid until the next Step.
func (e *Engine) Step(now time.Time, in Input) *Ready {
	e.ready.reset()
	e.observed = false
	switch in := in.(type) {
	case Tick:
		e.tick(now)
	case Reply:
		e.reply(in)
	case Housekeep:
		e.housekeep(in, now)
	case Stall:
		e.stalled(in.Late, now)
	case SetPeer:
		e.setPeer(in, now)
	case RemovePeer:
		e.removePeer(in.Name)
	case SetAddr:
		e.setAddr(in, now)
	case HoldAll:
		e.holdAll(now)
	case ReleaseAll:
		e.releaseAll()
	case PeerKeyMoved:
		e.peerKeyMoved(in)
	case StageKey:
		e.stageKey(in, now)
	case PeerStaged:
		e.peerStaged(in.Peer, now)
	case KeySwitched:
		e.keySwitched(in.Key)
	case SwitchFailed:
		e.switchFailed(now)
	case PeerNotice:
		e.peerNotice(in.Peer)
	}
	e.ready.Observed = e.observed
	return &e.ready
}

// MinStall is the smallest lateness of the shell counted as a stall
// (health.Monitor.Stalled). Below it is timer slop: Go's timers wake
// within tens of µs on an idle machine, and the monitor ignores a stall
// shorter than a quarter of a path's interval anyway (5 ms at a 20 ms
// interval), so smaller ones would only cost a pass over the paths on
// every wake.
const MinStall = time.Millisecond

// stalled takes a late wake of the shell (Stall): time the relay could not
// run does not count as silence of its paths.
func (e *Engine) stalled(late time.Duration, now time.Time) {
	if late < MinStall {
		return
	}
	e.mon.Stalled(late, now)
	e.ready.Stalled = late
}

// NextDeadline is when the engine next needs a Tick: a probe or a path's
// deadline, a selector hold maturing, or a step of our key rotation
// (zero: only inputs wake it).
func (e *Engine) NextDeadline() time.Time {
	d := e.mon.NextDeadline()
	for _, s := range []time.Time{e.sel.Due(), e.rotationWake()} {
		if !s.IsZero() && (d.IsZero() || s.Before(d)) {
			d = s
		}
	}
	return d
}

// tick sends the probes that are due, unless traffic replaced them, then
// takes the monitor's transitions to the selector and carries out the
// selector's decisions.
func (e *Engine) tick(now time.Time) {
	e.dueBuf = e.mon.Due(now, e.dueBuf[:0])
	for _, pr := range e.dueBuf {
		p, i := e.probePath(pr.ID)
		if p != nil {
			if e.replacedByTraffic(pr, p, i, now) {
				continue
			}
			if a := p.spec.Paths[i].Addr; a.IsValid() {
				e.ready.Probes = append(e.ready.Probes, Probe{Probe: pr, To: a, Path: i})
			}
		}
		e.ready.Due = append(e.ready.Due, pr)
	}
	e.transBuf = e.mon.Tick(now, e.transBuf[:0])
	for _, t := range e.transBuf {
		p, i := e.probePath(t.ID)
		if p == nil {
			continue
		}
		e.ready.Paths = append(e.ready.Paths, PathChange{Peer: t.ID.Peer, Path: p.spec.Paths[i].Name, Index: i, Slot: t.ID.Path, Up: t.Up, At: t.At})
		e.observe(p, i, now)
		e.updateRedundancy(p, now, false) // the second-best path may have changed
	}
	for _, ev := range e.sel.Tick(now) {
		e.act(ev, now)
	}
	e.stepRotation(now)
}

// probePath finds the peer and index of path id; nil if gone.
func (e *Engine) probePath(id health.PathID) (*peer, int) {
	p, ok := e.peers[id.Peer]
	if !ok {
		return nil, -1
	}
	i := p.indexOfSlot(id.Path)
	if i < 0 {
		return nil, -1
	}
	return p, i
}

// observe feeds a path's current health into the selector.
func (e *Engine) observe(p *peer, i int, now time.Time) {
	s, ok := e.mon.Stats(p.id(i))
	if !ok {
		return
	}
	e.sel.Observe(p.spec.Name, p.spec.Paths[i].Name, failover.Observation{Up: s.State == health.Up, SRTT: s.SRTT, Loss: s.Loss, LastRTT: s.LastRTT}, now)
}
