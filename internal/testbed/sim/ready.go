package sim

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// Switch is a selection decision (Ready.Switches) and the peer's state
// right after the step that made it.
type Switch struct {
	failover.Event
	// Spare: the peer has a usable path (up, and not dampened) other
	// than the new active one.
	Spare bool
	// Second is the index of the path the peer's traffic is copied to
	// (-1: none), and SecondUp whether that path is up.
	Second   int
	SecondUp bool
}

// Move is a move of a peer's traffic (Ready.Moves) at At, with the paths
// it leaves.
type Move struct {
	engine.Move
	At time.Time
	// From and FromSecond are the active and copy paths of the peer's
	// previous move (-1: none).
	From, FromSecond int
	// FromUp: one of them is up right after the step.
	FromUp bool
}

// Redundancy is a change of a peer's redundant sending (Ready.Redundancy)
// at At; ToUp says the path copies go to is up then (false when copying
// stops).
type Redundancy struct {
	engine.Redundancy
	At   time.Time
	ToUp bool
}

// Handshake is a handshake the engine asked for (Ready.Handshakes) at At;
// Held says our initiations to the peer are held at At, so the Bind drops
// it (and WireGuard's retries while the hold lasts).
type Handshake struct {
	engine.Handshake
	At   time.Time
	Held bool
}

// Hold is a hold of our initiations to Peer starting (Hold) or ending
// (Ready.Holds) at At.
type Hold struct {
	Peer string
	Hold bool
	At   time.Time
}

// KeySwitch is a switch to our next key the engine asked for at At;
// Failed: the mesh answered that it failed (Options.FailSwitches).
type KeySwitch struct {
	engine.KeySwitch
	At     time.Time
	Failed bool
}

// take carries out and records what one step decided, in the order of
// Ready's fields. It feeds nothing back to the engine: the Ready is the
// engine's own until the next Step, so a key switch it asks for is
// answered after it (Mesh.step). Routes, keepalives and restarts need
// nothing of the simulated world and are not kept; no peer of the mesh
// rotates its own key, so no MoveKeys come.
func (m *Mesh) take(r *engine.Ready) {
	for _, p := range r.Probes {
		m.transmit(p)
	}
	for _, x := range r.RTTs {
		id := health.PathID{Peer: x.Peer, Path: x.Index}
		m.Answers[id] = append(m.Answers[id], m.Now)
	}
	for _, p := range r.Paths {
		tr := health.Transition{ID: health.PathID{Peer: p.Peer, Path: p.Slot}, Up: p.Up, At: p.At}
		if p.Up {
			m.Ups = append(m.Ups, tr)
			continue
		}
		m.Downs = append(m.Downs, tr)
		st, _ := m.Engine.Stats(p.Peer, p.Index)
		m.DownJitter = append(m.DownJitter, st.Jitter)
	}
	for _, ev := range r.Switches {
		m.Events = append(m.Events, m.switchState(ev))
	}
	for _, mv := range r.Moves {
		m.move(mv)
	}
	for _, x := range r.Redundancy {
		i := m.index(x.Peer, x.To)
		m.Redundancy = append(m.Redundancy, Redundancy{Redundancy: x, At: m.Now, ToUp: i >= 0 && m.up(x.Peer, i)})
	}
	for _, h := range r.Handshakes {
		w := m.wg[h.Peer]
		m.Handshakes = append(m.Handshakes, Handshake{Handshake: h, At: m.Now, Held: w != nil && w.held})
		m.initiate(h.Peer, m.Now, false)
	}
	for _, h := range r.Holds {
		if w := m.wg[h.Peer]; w != nil {
			w.held = h.Hold
		}
		m.Holds = append(m.Holds, Hold{Peer: h.Peer, Hold: h.Hold, At: m.Now})
	}
	if r.SwitchKey != nil {
		m.KeySwitches = append(m.KeySwitches, KeySwitch{KeySwitch: *r.SwitchKey, At: m.Now})
		m.switchAsked = true
	}
	if len(r.Paths) > 0 || len(r.Switches) > 0 {
		m.changed = true
	}
}

// switchState is ev with the peer's state after the step.
func (m *Mesh) switchState(ev failover.Event) Switch {
	s := Switch{Event: ev, Second: -1}
	to := m.index(ev.Peer, ev.To)
	for i := range m.links[ev.Peer] {
		if i != to && m.usable(ev.Peer, i) {
			s.Spare = true
		}
	}
	if v, ok := m.Engine.Peer(ev.Peer); ok && v.Second >= 0 {
		s.Second, s.SecondUp = v.Second, m.up(ev.Peer, v.Second)
	}
	return s
}

// move records a move and follows which path is active: the engine's
// monitor probes the path a peer's traffic takes at the active rate, from
// the peer's first move (SetPeer) on, reachable or not.
func (m *Mesh) move(mv engine.Move) {
	prev, seen := m.last[mv.Peer]
	rec := Move{Move: mv, At: m.Now, From: -1, FromSecond: -1}
	if seen {
		rec.From, rec.FromSecond = prev.Active, prev.Second
		rec.FromUp = m.up(mv.Peer, prev.Active) || (prev.Second >= 0 && m.up(mv.Peer, prev.Second))
		if prev.Active != mv.Active {
			m.setActive(health.PathID{Peer: mv.Peer, Path: prev.Active}, false)
		}
	}
	if !seen || prev.Active != mv.Active {
		m.setActive(health.PathID{Peer: mv.Peer, Path: mv.Active}, true)
	}
	m.last[mv.Peer] = mv
	m.Moves = append(m.Moves, rec)
}

func (m *Mesh) setActive(id health.PathID, on bool) {
	if on {
		m.since[id] = m.Now
	} else if s, ok := m.since[id]; ok {
		m.active[id] = append(m.active[id], Window{s, m.Now})
		delete(m.since, id)
	}
}

// index is the index of the peer's link called name, or -1.
func (m *Mesh) index(peer, name string) int {
	for i, l := range m.links[peer] {
		if l.Name == name {
			return i
		}
	}
	return -1
}

// up reports whether the engine has path i of peer up.
func (m *Mesh) up(peer string, i int) bool {
	st, ok := m.Engine.Stats(peer, i)
	return ok && st.State == health.Up
}

// usable reports whether path i of peer may be chosen: up, and up (not
// dampened) for the selector.
func (m *Mesh) usable(peer string, i int) bool {
	s, _, ok := m.Engine.Selection(peer, i)
	return ok && s == failover.Up && m.up(peer, i)
}
