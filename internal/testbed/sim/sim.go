// Package sim is a deterministic simulated mesh for testing the relay's
// decisions: one relay runs the real engine (internal/core/engine, the
// state machine the agent runs) against many peers over scripted links
// (latency, jitter, loss, cuts, windows of traffic), on fake time.
//
// The mesh is the engine's shell, as the agent is with real packets and a
// real clock: it sends the probes of every Ready over the links and
// answers them, feeds the engine Tick at its deadlines, Reply for each
// answer that arrives and Housekeep every round with the data the links
// carried (passive evidence), and answers the engine's Facts from the
// links and from a simulated WireGuard, in which a handshake makes a
// session one round trip later. It records what the engine decided (path
// transitions, switches, moves with their flowlet gaps, redundant
// sending, handshakes, holds) and the sessions made, for property tests.
// Like raft's in-memory network, it lets tests cut and restore paths and
// check properties over thousands of decisions, reproducibly from a seed.
//
// Time jumps from one event to the next (a probe or a path deadline of the
// engine, a reply arriving, a housekeeping round, a handshake), so
// detection has no tick granularity: a down transition is reported at its
// deadline.
package sim

import "time"

// Window is a time interval [From, To).
type Window struct{ From, To time.Time }

func (w Window) contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

func inAny(ws []Window, t time.Time) bool {
	for _, w := range ws {
		if w.contains(t) {
			return true
		}
	}
	return false
}

// Link is one path to one peer: a round-trip time Base + U(-Jitter, +Jitter)
// per probe, independent loss Loss of probes on each leg, and Cuts during
// which both legs drop everything.
type Link struct {
	Name   string
	Base   time.Duration
	Jitter time.Duration
	Loss   float64
	Cuts   []Window
	// Traffic are the windows during which the peer's authenticated data
	// arrives continuously over the link (unless it is cut). It is seen
	// only while Mesh.Demand is on, as the relay sees it: as the arrival
	// time of the latest data (Facts.LastRx) and as the Bind's packet
	// counts of the link's address (Housekeep).
	Traffic []Window
	// Mute are windows during which the link drops probes and their
	// answers but still carries data, as a middlebox that filters or
	// rate-limits the probe packets does.
	Mute []Window
}

// LastRx is the arrival time of the latest data over the link at or before
// t (zero: none): the supremum of the instants in a traffic window and in
// no cut. That set is a union of intervals, so the supremum is t itself or
// the end of one of them.
func (l *Link) LastRx(t time.Time) time.Time {
	flows := func(at time.Time) bool { return !l.Cut(at) && inAny(l.Traffic, at) }
	best := time.Time{}
	try := func(at time.Time) {
		if !at.After(t) && at.After(best) && flows(at) {
			best = at
		}
	}
	try(t)
	for _, w := range l.Traffic {
		try(w.To.Add(-time.Nanosecond))
	}
	for _, c := range l.Cuts {
		try(c.From.Add(-time.Nanosecond))
	}
	return best
}

// Cut reports whether the link is cut at t.
func (l *Link) Cut(at time.Time) bool { return inAny(l.Cuts, at) }

// drops reports whether the link drops a probe or an answer leaving at t.
func (l *Link) drops(at time.Time) bool { return l.Cut(at) || inAny(l.Mute, at) }

// MaxRTT is the largest round-trip time the link produces.
func (l *Link) MaxRTT() time.Duration { return l.Base + l.Jitter }
