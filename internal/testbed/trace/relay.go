package trace

import (
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Relay is a relay under a trace. Step feeds one input at now (a Tick,
// Reply, Housekeep, Stall, PeerStaged or PeerNotice) and returns what the
// relay did; Stage gives the relay its next key, as a configuration
// would; FailNextSwitch makes its next switch to that key fail, as a
// WireGuard device that refuses the key would.
type Relay interface {
	Step(now time.Time, in engine.Input) Actions
	Stage(now time.Time, next keys.Private, deadline time.Duration) Actions
	FailNextSwitch()
	// NextDeadline is when the relay's engine next needs a Tick.
	NextDeadline() time.Time
}

// Factory builds the relay of cfg at start, its peers' paths at addrs (by
// peer, by path index), reading facts from facts and drawing its probe
// schedule's jitter from rnd. It returns what the relay did while it
// started.
type Factory func(cfg *config.Config, addrs map[string][]netip.AddrPort, facts engine.Facts, rnd *rand.Rand, start time.Time) (Relay, Actions, error)

// Actions are what a relay did in one step: everything it sent or changed
// outside itself.
type Actions struct {
	Probes     []engine.Probe
	Switches   []failover.Event
	Moves      []engine.Move
	Routes     []engine.Route
	Keepalives []string
	Handshakes []engine.Handshake
	Holds      []engine.Hold
	// KeySwitch is set when the relay switched to its next key;
	// SwitchFailed when it tried and failed.
	KeySwitch, SwitchFailed bool
	// KeyMoves are the peers the relay moved to their next key.
	KeyMoves []engine.KeyMove
}

// ActionsOf are the actions an engine's Ready asks for.
func ActionsOf(r *engine.Ready) Actions {
	return Actions{
		Probes:     append([]engine.Probe(nil), r.Probes...),
		Switches:   append([]failover.Event(nil), r.Switches...),
		Moves:      append([]engine.Move(nil), r.Moves...),
		Routes:     append([]engine.Route(nil), r.Routes...),
		Keepalives: append([]string(nil), r.Keepalives...),
		Handshakes: append([]engine.Handshake(nil), r.Handshakes...),
		Holds:      append([]engine.Hold(nil), r.Holds...),
		KeySwitch:  r.SwitchKey != nil,
		KeyMoves:   append([]engine.KeyMove(nil), r.MoveKeys...),
	}
}

// add appends b's actions to a's.
func (a *Actions) add(b Actions) {
	a.Probes = append(a.Probes, b.Probes...)
	a.Switches = append(a.Switches, b.Switches...)
	a.Moves = append(a.Moves, b.Moves...)
	a.Routes = append(a.Routes, b.Routes...)
	a.Keepalives = append(a.Keepalives, b.Keepalives...)
	a.Handshakes = append(a.Handshakes, b.Handshakes...)
	a.Holds = append(a.Holds, b.Holds...)
	a.KeySwitch = a.KeySwitch || b.KeySwitch
	a.SwitchFailed = a.SwitchFailed || b.SwitchFailed
	a.KeyMoves = append(a.KeyMoves, b.KeyMoves...)
}

// engineRelay is the engine as a trace's relay: it does what each Ready
// asks; a key switch it asks for succeeds unless failNext is set, and a
// peer's move to its next key succeeds.
type engineRelay struct {
	e        *engine.Engine
	peers    []string
	failNext bool
}

// EngineRelay builds the engine alone as the relay: its peers set from cfg
// as the relay's shell sets them.
func EngineRelay(cfg *config.Config, addrs map[string][]netip.AddrPort, facts engine.Facts, rnd *rand.Rand, start time.Time) (Relay, Actions, error) {
	r := &engineRelay{e: engine.New(engine.Options{
		Self: cfg.PrivateKey.PublicKey(), Rand: rnd, Selection: cfg.Health.Selection, Facts: facts,
	})}
	var acts Actions
	for _, p := range cfg.Peers {
		r.peers = append(r.peers, p.Name)
		acts.add(r.Step(start, engine.SetPeer{Spec: engine.SpecOf(p, addrs[p.Name]), Initial: true}))
	}
	return r, acts, nil
}

func (r *engineRelay) Step(now time.Time, in engine.Input) Actions {
	ready := r.e.Step(now, in)
	acts := ActionsOf(ready)
	// What feeds the engine again runs from copies: each step reuses ready.
	sw, moves := ready.SwitchKey != nil, acts.KeyMoves
	if sw {
		if r.failNext {
			r.failNext = false
			acts.KeySwitch, acts.SwitchFailed = false, true
			acts.add(ActionsOf(r.e.Step(now, engine.SwitchFailed{})))
		} else {
			acts.add(r.stepSwitched(now))
		}
	}
	for _, mv := range moves {
		acts.add(ActionsOf(r.e.Step(now, engine.PeerKeyMoved{Peer: mv.Peer, Key: mv.Key})))
	}
	return acts
}

func (r *engineRelay) FailNextSwitch() { r.failNext = true }

func (r *engineRelay) NextDeadline() time.Time { return r.e.NextDeadline() }

func (r *engineRelay) Stage(now time.Time, next keys.Private, deadline time.Duration) Actions {
	return r.Step(now, engine.StageKey{Next: next.PublicKey(), Deadline: deadline, Peers: r.peers})
}

// stepSwitched tells the engine the key switch succeeded.
func (r *engineRelay) stepSwitched(now time.Time) Actions {
	next, _ := r.e.Rotation(now)
	return ActionsOf(r.e.Step(now, engine.KeySwitched{Key: next.Next}))
}
