package trace

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Start is the trace clock's origin.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// housekeeping is the interval of the relay's housekeeping rounds, as the
// relay's owner loop runs them.
const housekeeping = 100 * time.Millisecond

// peerEpoch is the boot epoch every peer's answers carry.
const peerEpoch = 7

// player plays one trace against one relay.
type player struct {
	s      *setup
	relay  Relay
	now    time.Time
	nextHK time.Time
	// inflight are answers on their way, by arrival.
	inflight []engine.Reply
	// active is each peer's path index as the relay last moved it.
	active map[string]int
	// traffic marks the peers whose data flows; rx and tx count it.
	traffic map[string]bool
	rx, tx  map[string]uint64
	lastRx  map[netip.AddrPort]time.Time
	// sessions are WireGuard sessions by peer: when the current one was
	// made, and handshakes on their way.
	session map[string]time.Time
	pending []pendingSession
	probes  map[string]int // probes sent per peer/path in the current run
	log     []string
}

type pendingSession struct {
	peer string
	at   time.Time
}

// Run plays script against the relay that newRelay builds and returns
// what the relay did, one line per action.
func Run(script string, newRelay Factory) (string, error) {
	cmds, err := parse(script)
	if err != nil {
		return "", err
	}
	s, rest, err := build(cmds)
	if err != nil {
		return "", err
	}
	p := &player{
		s: s, now: Start, nextHK: Start, active: map[string]int{}, traffic: map[string]bool{},
		rx: map[string]uint64{}, tx: map[string]uint64{}, lastRx: map[netip.AddrPort]time.Time{},
		session: map[string]time.Time{}, probes: map[string]int{},
	}
	r, acts, err := newRelay(s.cfg, s.addrs, p, rand.New(rand.NewPCG(1, 2)), Start)
	if err != nil {
		return "", err
	}
	p.relay = r
	p.record(acts)
	for _, c := range rest {
		if err := p.do(c); err != nil {
			return strings.Join(p.log, "\n"), err
		}
	}
	return strings.Join(p.log, "\n") + "\n", nil
}

// do carries out one command of the script.
func (p *player) do(c command) error {
	switch c.verb {
	case "run":
		if err := c.want(1); err != nil {
			return err
		}
		d, err := c.duration(c.args[0])
		if err != nil {
			return err
		}
		p.run(d)
	case "cut", "restore":
		if err := c.want(2); err != nil {
			return err
		}
		l := p.s.link(c.args[0], c.args[1])
		if l == nil {
			return c.errorf("no path %s of %s", c.args[1], c.args[0])
		}
		l.cut = c.verb == "cut"
		p.logf("%s %s/%s", c.verb, l.peer, l.name)
	case "traffic":
		if err := c.want(2); err != nil {
			return err
		}
		p.traffic[c.args[0]] = c.args[1] == "on"
		p.logf("traffic %s %s", c.args[0], c.args[1])
	case "stall":
		if err := c.want(1); err != nil {
			return err
		}
		d, err := c.duration(c.args[0])
		if err != nil {
			return err
		}
		p.logf("stall %v", d)
		p.now = p.now.Add(d)
		p.record(p.relay.Step(p.now, engine.Stall{Late: d}))
	case "stage":
		k, err := c.key()
		if err != nil {
			return err
		}
		deadline := time.Hour
		if v, ok := c.opts["deadline"]; ok {
			if deadline, err = c.duration(v); err != nil {
				return err
			}
		}
		p.logf("stage %s", short(k.PublicKey()))
		p.record(p.relay.Stage(p.now, k, deadline))
	case "session":
		if err := c.want(1); err != nil {
			return err
		}
		p.logf("session %s", c.args[0])
		p.session[c.args[0]] = p.now
	case "staged":
		if err := c.want(1); err != nil {
			return err
		}
		p.logf("staged %s", c.args[0])
		p.record(p.relay.Step(p.now, engine.PeerStaged{Peer: c.args[0]}))
	case "notice":
		if err := c.want(1); err != nil {
			return err
		}
		p.logf("notice %s", c.args[0])
		p.record(p.relay.Step(p.now, engine.PeerNotice{Peer: c.args[0]}))
	case "failswitch":
		if err := c.want(0); err != nil {
			return err
		}
		p.logf("failswitch")
		p.relay.FailNextSwitch()
	default:
		return c.errorf("unknown command")
	}
	return nil
}

// run lets d pass: answers arrive, housekeeping runs every round, the
// relay ticks at its deadlines and after each input. At the end it logs
// the probes the run sent.
func (p *player) run(d time.Duration) {
	end := p.now.Add(d)
	for {
		next := end
		if len(p.inflight) > 0 && p.inflight[0].At.Before(next) {
			next = p.inflight[0].At
		}
		if dl := p.relay.NextDeadline(); !dl.IsZero() && dl.Before(next) {
			next = dl
		}
		if p.nextHK.Before(next) {
			next = p.nextHK
		}
		if len(p.pending) > 0 && p.pending[0].at.Before(next) {
			next = p.pending[0].at
		}
		if next.After(end) {
			break
		}
		p.now = later(p.now, next)
		p.flow()
		switch {
		case len(p.pending) > 0 && !p.pending[0].at.After(p.now):
			p.session[p.pending[0].peer] = p.pending[0].at
			p.pending = p.pending[1:]
		case len(p.inflight) > 0 && !p.inflight[0].At.After(p.now):
			r := p.inflight[0]
			p.inflight = p.inflight[1:]
			p.record(p.relay.Step(p.now, r))
		case !p.nextHK.After(p.now):
			p.nextHK = p.now.Add(housekeeping)
			p.record(p.relay.Step(p.now, p.housekeep()))
		}
		p.record(p.relay.Step(p.now, engine.Tick{}))
		if !p.now.Before(end) {
			break
		}
	}
	p.now = end
	p.flushProbes()
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// flow moves the data of peers with traffic over their active path, when
// it is not cut: it counts one message each way per step.
func (p *player) flow() {
	for peer, on := range p.traffic {
		if !on {
			continue
		}
		l := p.activeLink(peer)
		if l == nil || l.cut {
			continue
		}
		p.rx[peer]++
		p.tx[peer]++
		p.lastRx[l.addr] = p.now
	}
}

// activeLink is the path the relay last moved the peer's traffic to.
func (p *player) activeLink(peer string) *link {
	i := p.active[peer]
	addrs := p.s.addrs[peer]
	if i < 0 || i >= len(addrs) {
		return nil
	}
	return p.s.linkAt(addrs[i])
}

// housekeep is one round of the Bind's counters: every peer's data by
// source (its active path's address) and the data sent to it.
func (p *player) housekeep() engine.Housekeep {
	var h engine.Housekeep
	for _, peer := range p.peerNames() {
		t := engine.Traffic{Peer: peer, TxData: p.tx[peer]}
		if l := p.activeLink(peer); l != nil && p.rx[peer] > 0 {
			t.Sources = []engine.Source{{Addr: l.addr, Packets: p.rx[peer]}}
		}
		h.Peers = append(h.Peers, t)
	}
	return h
}

// peerNames are the configured peers, in order.
func (p *player) peerNames() []string {
	var out []string
	for _, c := range p.s.cfg.Peers {
		out = append(out, c.Name)
	}
	return out
}

// LastRx is when data from the peer last arrived over the path.
func (p *player) LastRx(_ string, observed, addr netip.AddrPort) time.Time {
	return later(p.lastRx[observed], p.lastRx[addr])
}

// LastRequest: the trace's peers send no requests of their own.
func (p *player) LastRequest(string, netip.AddrPort, netip.AddrPort) time.Time { return time.Time{} }

// LastHandshake is when the peer's current session was made.
func (p *player) LastHandshake(peer string) time.Time { return p.session[peer] }

// record logs what the relay did, sends its probes and starts the
// sessions its handshakes make.
func (p *player) record(a Actions) {
	for _, pr := range a.Probes {
		p.send(pr)
	}
	for _, ev := range a.Switches {
		p.logf("switch %s %q -> %q (%s)", ev.Peer, ev.From, ev.To, ev.Reason)
	}
	for _, m := range a.Moves {
		p.active[m.Peer] = m.Active
		p.logf("move %s to %s second %s gap %v", m.Peer, p.pathName(m.Peer, m.Active), p.pathName(m.Peer, m.Second), m.Gap)
	}
	for _, r := range a.Routes {
		p.logf("routes %s reachable=%v", r.Peer, r.Reachable)
	}
	for _, k := range a.Keepalives {
		p.logf("keepalive %s", k)
		p.handshake(k)
	}
	for _, h := range a.Handshakes {
		p.logf("handshake %s %s expire=%v", h.Peer, h.Reason, h.Expire)
		p.handshake(h.Peer)
	}
	for _, h := range a.Holds {
		p.logf("hold %s %v", h.Peer, h.Hold)
	}
	if a.KeySwitch {
		p.logf("key switched")
	}
	if a.SwitchFailed {
		p.logf("key switch failed")
	}
	for _, mv := range a.KeyMoves {
		p.logf("key move %s to %s start=%v", mv.Peer, short(mv.Key), mv.Start)
	}
}

// pathName is the name of path i of peer ("-" for none).
func (p *player) pathName(peer string, i int) string {
	addrs := p.s.addrs[peer]
	if i < 0 || i >= len(addrs) {
		return "-"
	}
	return p.s.linkAt(addrs[i]).name
}

// send puts a probe on its path: its answer arrives one RTT later unless
// the path is cut when the probe or the answer crosses it.
func (p *player) send(pr engine.Probe) {
	l := p.s.linkAt(pr.To)
	if l == nil {
		return
	}
	p.probes[l.peer+"/"+l.name]++
	if l.cut {
		return
	}
	p.inflight = append(p.inflight, engine.Reply{
		Peer: pr.ID.Peer, Slot: pr.ID.Path, Nonce: pr.Nonce, Epoch: peerEpoch, From: l.addr, At: p.now.Add(l.rtt),
	})
	slices.SortStableFunc(p.inflight, func(a, b engine.Reply) int { return a.At.Compare(b.At) })
}

// handshake starts a session with peer over its active path: made one RTT
// later unless the path is cut.
func (p *player) handshake(peer string) {
	l := p.activeLink(peer)
	if l == nil || l.cut {
		return
	}
	p.pending = append(p.pending, pendingSession{peer: peer, at: p.now.Add(l.rtt)})
	slices.SortStableFunc(p.pending, func(a, b pendingSession) int { return a.at.Compare(b.at) })
}

// flushProbes logs the probes sent since the last flush, per path.
func (p *player) flushProbes() {
	if len(p.probes) == 0 {
		return
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.probes)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p.probes[k]))
	}
	p.logf("probes %s", strings.Join(parts, " "))
	clear(p.probes)
}

func (p *player) logf(format string, a ...any) {
	p.log = append(p.log, fmt.Sprintf("%7dms ", p.now.Sub(Start).Milliseconds())+fmt.Sprintf(format, a...))
}

// short is the first bytes of a key, for the log.
func short(k keys.Public) string { return k.Hex()[:8] }
