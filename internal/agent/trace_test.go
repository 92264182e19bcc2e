package agent

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
	"github.com/liqo-relay/relay/internal/dataplane/pipe"
	"github.com/liqo-relay/relay/internal/dataplane/tun/tuntest"
	"github.com/liqo-relay/relay/internal/testbed/trace"
)

// TestGoldenTracesThroughTheShell plays every golden trace (written by the
// engine alone, internal/testbed/trace) against the relay's shell: an
// Agent whose Bind, WireGuard device, handshakes and routes are fakes
// that record what it does. The same log shows that the shell carries
// out the engine's decisions and makes none of its own.
func TestGoldenTracesThroughTheShell(t *testing.T) {
	trace.Check(t, "../testbed/trace/"+trace.Dir, newShellRelay, false)
}

// traceClock is the trace's time, set before every call into the shell.
type traceClock struct{ now time.Time }

func (c *traceClock) Now() time.Time { return c.now }

// shellRelay is the relay's shell under a trace.
type shellRelay struct {
	a     *Agent
	clock *traceClock
	rec   *recorder
	seen  uint64 // switches already reported (eventLog.added)
}

// newShellRelay builds an Agent for cfg as New does, with the recorder as
// its data plane (trace.Factory).
func newShellRelay(cfg *config.Config, addrs map[string][]netip.AddrPort, facts engine.Facts, rnd *rand.Rand, start time.Time) (trace.Relay, trace.Actions, error) {
	clock := &traceClock{now: start}
	a, err := newAgent(cfg, Options{Clock: clock, Rand: rnd, AdminAddr: "-"}.withDefaults())
	if err != nil {
		return nil, trace.Actions{}, err
	}
	cfg = cfg.Clone()
	a.dns = a.newWatcher(cfg)
	a.probes.Store(&probeIndex{})
	rec := &recorder{facts: facts, byAddr: map[netip.AddrPort]string{}, byKey: map[string]string{}, counters: map[string]multipath.Counters{}}
	for _, p := range cfg.Peers {
		rec.byKey[hexKey(p.PublicKey)] = p.Name
		for _, ad := range addrs[p.Name] {
			rec.byAddr[ad] = p.Name
		}
	}
	dev, _ := tuntest.NewPair(1420)
	a.dp = &dataplane{paths: rec, wg: rec, hs: rec, pipe: pipe.Wrap(dev)}
	resolved := a.resolveChanged(context.Background(), nil, cfg)
	if err := a.applyFirst(cfg, resolved); err != nil {
		return nil, trace.Actions{}, err
	}
	// Routes from here on: the first configuration's are not decisions.
	a.dp.routes = routeRecorder{rec}
	r := &shellRelay{a: a, clock: clock, rec: rec}
	return r, r.take(), nil
}

func (r *shellRelay) Step(now time.Time, in engine.Input) trace.Actions {
	r.clock.now = now
	a := r.a
	switch in := in.(type) {
	case engine.Tick:
		a.step(now)
	case engine.Reply:
		a.onReply(probeReply{peer: in.Peer, from: in.From, at: in.At,
			msg: health.Message{Kind: health.KindReply, Path: uint16(in.Slot), Nonce: in.Nonce, Epoch: in.Epoch}})
	case engine.Housekeep:
		for _, t := range in.Peers {
			c := multipath.Counters{TxData: t.TxData}
			for _, s := range t.Sources {
				c.Sources = append(c.Sources, multipath.Source{Addr: s.Addr, Packets: s.Packets})
			}
			r.rec.counters[t.Peer] = c
		}
		a.housekeep(now)
	case engine.Stall:
		a.reportLateness(in.Late, now)
	case engine.PeerStaged:
		a.onReply(probeReply{peer: in.Peer, rot: peerStaged, at: now})
	case engine.PeerNotice:
		a.onReply(probeReply{peer: in.Peer, rot: peerSwitched, at: now})
	default:
		panic(fmt.Sprintf("the shell under a trace takes no %T", in))
	}
	return r.take()
}

// Stage reloads the configuration with next as our next key.
func (r *shellRelay) Stage(now time.Time, next keys.Private, deadline time.Duration) trace.Actions {
	r.clock.now = now
	c := r.a.cfg.Clone()
	c.NextPrivateKey, c.KeyRotationDeadline = next, deadline
	if err := r.a.apply(c, nil, false); err != nil {
		panic(fmt.Sprintf("staging the next key: %v", err))
	}
	return r.take()
}

func (r *shellRelay) NextDeadline() time.Time { return r.a.eng.NextDeadline() }

// FailNextSwitch makes the fake device refuse the next private key.
func (r *shellRelay) FailNextSwitch() { r.rec.failKey = true }

// take returns what the shell did since the last take: the recorder's
// actions and the path switches its event log got.
func (r *shellRelay) take() trace.Actions {
	acts := r.rec.acts
	r.rec.acts = trace.Actions{}
	l := &r.a.events
	if n := l.added - r.seen; n > 0 {
		evs := l.list()
		for _, e := range evs[len(evs)-int(n):] {
			acts.Switches = append(acts.Switches, failover.Event{Peer: e.Peer, From: e.From, To: e.To, Reason: failover.Reason(e.Reason)})
		}
		r.seen = l.added
	}
	return acts
}

// recorder is the data plane under a trace: the Bind (pathBind), the
// WireGuard device (wgDevice) and its handshakes (handshaker), with the
// route table beside it (routeRecorder). It records what the shell asks of them, answers
// from the trace's facts, and sends nothing.
type recorder struct {
	facts    engine.Facts
	byAddr   map[netip.AddrPort]string // path address -> peer
	byKey    map[string]string         // hex public key -> peer
	counters map[string]multipath.Counters
	acts     trace.Actions
	failKey  bool // refuse the next private key once
}

func (r *recorder) SetPeer(string, []multipath.Path) {}
func (r *recorder) RemovePeer(string)                {}
func (r *recorder) SetActive(string, int)            {}

func (r *recorder) Move(name string, active, second int, gap time.Duration) {
	r.acts.Moves = append(r.acts.Moves, engine.Move{Peer: name, Active: active, Second: second, Gap: gap})
}

func (r *recorder) HoldInitiations(name string, hold bool) {
	r.acts.Holds = append(r.acts.Holds, engine.Hold{Peer: name, Hold: hold})
}

func (r *recorder) Counters(name string, _ []multipath.Source) (multipath.Counters, bool) {
	c, ok := r.counters[name]
	return c, ok
}

func (r *recorder) LastRxFrom(name string, a1, a2 netip.AddrPort) time.Time {
	return r.facts.LastRx(name, a1, a2)
}

func (r *recorder) Redundant(string) (uint64, uint64) { return 0, 0 }

// SendTo carries the notices of a key switch, which the trace does not log.
func (r *recorder) SendTo([]byte, netip.AddrPort) error { return nil }

// Flush records the probes the step queued, once each: while a peer has
// a next key staged, each probe goes out sealed under both of its keys.
func (r *recorder) Flush(o *multipath.Outbox) error {
	type sent struct {
		to    netip.AddrPort
		nonce uint64
	}
	seen := map[sent]bool{}
	o.Drain(func(pkt []byte, to netip.AddrPort) {
		var m health.Message
		if health.Unmarshal(pkt, &m) != nil || seen[sent{to, m.Nonce}] {
			return
		}
		seen[sent{to, m.Nonce}] = true
		r.acts.Probes = append(r.acts.Probes, engine.Probe{To: to, Probe: health.Probe{
			ID: health.PathID{Peer: r.byAddr[to], Path: int(m.Path)}, Nonce: m.Nonce,
		}})
	})
	return nil
}

// IpcSet records the keepalives set, a switch of our private key (refused
// once after FailNextSwitch) and the move of a peer to its next key: the
// new WireGuard peer added and the old one removed in one set.
func (r *recorder) IpcSet(uapi string) error {
	lines := strings.Split(strings.TrimSuffix(uapi, "\n"), "\n")
	switch {
	case strings.HasPrefix(lines[0], "private_key="):
		if r.failKey {
			r.failKey = false
			r.acts.SwitchFailed = true
			return errors.New("the device refuses the key")
		}
		r.acts.KeySwitch = true
	case len(lines) == 2 && strings.HasPrefix(lines[1], "persistent_keepalive_interval="):
		r.acts.Keepalives = append(r.acts.Keepalives, r.byKey[strings.TrimPrefix(lines[0], "public_key=")])
	case strings.HasSuffix(uapi, "remove=true\n") && len(lines) > 2:
		r.recordMove(lines)
	}
	return nil
}

// recordMove records a peer's move to its next key from the IpcSet that
// adds the new WireGuard peer and removes the old one (the last two lines).
func (r *recorder) recordMove(lines []string) {
	newHex := strings.TrimPrefix(lines[0], "public_key=")
	oldHex := strings.TrimPrefix(lines[len(lines)-2], "public_key=")
	b, err := hex.DecodeString(newHex)
	if err != nil || len(b) != keys.Len {
		panic(fmt.Sprintf("a move to a key that is not one: %q", newHex))
	}
	name := r.byKey[oldHex]
	r.byKey[newHex] = name
	delete(r.byKey, oldHex)
	r.acts.KeyMoves = append(r.acts.KeyMoves, engine.KeyMove{
		Peer: name, Key: keys.Public(b), Start: slices.ContainsFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "persistent_keepalive_interval=")
		}),
	})
}

// IpcGet reports every peer's last handshake from the trace's facts.
func (r *recorder) IpcGet() (string, error) {
	var b strings.Builder
	for key, name := range r.byKey {
		fmt.Fprintf(&b, "public_key=%s\n", key)
		if t := r.facts.LastHandshake(name); !t.IsZero() {
			fmt.Fprintf(&b, "last_handshake_time_sec=%d\nlast_handshake_time_nsec=%d\n", t.Unix(), t.Nanosecond())
		}
	}
	return b.String(), nil
}

func (r *recorder) Initiate(peer keys.Public, reason string, expire bool) error {
	r.acts.Handshakes = append(r.acts.Handshakes, engine.Handshake{Peer: r.byKey[hexKey(peer)], Reason: reason, Expire: expire})
	return nil
}

// routeRecorder is the route table under a trace: it records the
// reachability the shell gives each peer's routes.
type routeRecorder struct{ r *recorder }

func (t routeRecorder) SetPeer(name string, _ []netip.Prefix, reachable bool) error {
	t.r.acts.Routes = append(t.r.acts.Routes, engine.Route{Peer: name, Reachable: reachable})
	return nil
}
func (routeRecorder) RemovePeer(string) error                 { return nil }
func (routeRecorder) EnsureRules() (repaired bool, err error) { return false, nil }
func (routeRecorder) Close() error                            { return nil }
