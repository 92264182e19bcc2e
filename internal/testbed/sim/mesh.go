package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// HousekeepRound is how often the mesh feeds the engine a Housekeep, as
// the agent's owner loop does.
const HousekeepRound = 100 * time.Millisecond

// epoch is the boot epoch in every answer: the simulated peers never
// restart.
const epoch = 1

// Options configure a Mesh.
type Options struct {
	// Seed drives link jitter and loss and the engine's probe schedule.
	Seed  uint64
	Start time.Time
	// Health are the probe settings of every path (zero:
	// health.DefaultSettings).
	Health health.Settings
	// Selection are the selection settings of every peer (zero:
	// failover.DefaultSettings).
	Selection failover.Settings
	// Links are the peers and their links, in path order.
	Links map[string][]*Link
	// Self is the simulated relay's public key, Keys those of the peers:
	// of the two, the smaller key initiates handshakes at once and the
	// larger defers (engine.HandshakeDeferral). A peer missing from Keys
	// gets defaultPeerKey, larger than the zero Self.
	Self keys.Public
	Keys map[string]keys.Public
	// FailSwitches is how many of the relay's switches to its next key
	// fail (the first ones), as a device that refuses the key would.
	FailSwitches int
}

// defaultPeerKey is the key of a peer that Options.Keys leaves out.
var defaultPeerKey = keys.Public{0x80}

// Mesh is the simulated relay: its engine, the links to its peers and the
// peers' WireGuard sessions.
type Mesh struct {
	Health health.Settings
	// Engine is the relay's engine; tests read its views.
	Engine *engine.Engine
	Now    time.Time
	// Demand: the links carry the peer's data in their Traffic windows.
	// Off, no data arrives over any link (Facts.LastRx is zero and
	// Housekeep counts no packets), so no probe is replaced by traffic.
	// The engine's demand mode is always on, as in the relay.
	Demand bool
	// CountsOnly: the data plane reports the packets it received from
	// each address (Housekeep) but not when the latest arrived
	// (Facts.LastRx is zero): passive evidence then comes from
	// housekeeping alone, and no probe is replaced by traffic.
	CountsOnly bool

	// Events are every selection decision so far (Ready.Switches), with
	// the peer's state right after it.
	Events []Switch
	// Downs are every down transition of a path (Ready.Paths), Ups every
	// up transition; Path in their ID is the link's index, which is also
	// the path's slot (the mesh never moves a path's address).
	Downs, Ups []health.Transition
	// DownJitter is, for each of Downs, the path's RTT jitter estimate at
	// the down: its deadline's margin (health.DeadlineMargin) came from it.
	DownJitter []time.Duration
	// Answers are the arrival times of every probe answer the engine
	// matched (Ready.RTTs), by path.
	Answers map[health.PathID][]time.Time
	// Suppressed counts the probes the engine's monitor scheduled and
	// traffic replaced, which are not sent (the paths'
	// health.PathStats.Suppressed, summed at the end of Run).
	Suppressed int
	// Moves, Redundancy, Handshakes and Holds are the engine's outputs of
	// those kinds, with their times; Sessions the WireGuard sessions made.
	Moves      []Move
	Redundancy []Redundancy
	Handshakes []Handshake
	Holds      []Hold
	Sessions   []Session
	// KeySwitches are the switches to our next key the engine asked for
	// (Ready.SwitchKey), failed or not.
	KeySwitches []KeySwitch

	rnd    *rand.Rand
	peers  []string
	links  map[string][]*Link
	addrOf map[health.PathID]netip.AddrPort
	pathOf map[netip.AddrPort]health.PathID
	air    arrivals
	active map[health.PathID][]Window // closed activity windows per path
	since  map[health.PathID]time.Time
	last   map[string]engine.Move // the latest move of each peer

	nextRound, lastRound time.Time
	rx                   map[health.PathID]uint64 // packets counted from each link's address
	tx                   uint64                   // data messages sent to each peer
	wg                   map[string]*session
	attempts             []attempt // handshakes on their way, by time
	changed              bool      // a step of this wake had transitions or switches
	failSwitches         int       // switches still to fail (Options.FailSwitches)
	switchAsked          bool      // the step's Ready asked for a key switch
}

// New builds a mesh starting at o.Start, with one engine in which every
// link of every peer is a path (named as the link, at an address of its
// own) probed with o.Health.
func New(o Options) *Mesh {
	if o.Health == (health.Settings{}) {
		o.Health = health.DefaultSettings()
	}
	if o.Selection == (failover.Settings{}) {
		o.Selection = failover.DefaultSettings()
	}
	m := &Mesh{
		Health: o.Health, Now: o.Start, Answers: map[health.PathID][]time.Time{},
		rnd: rand.New(rand.NewPCG(o.Seed, 99)), links: o.Links,
		addrOf: map[health.PathID]netip.AddrPort{}, pathOf: map[netip.AddrPort]health.PathID{},
		active: map[health.PathID][]Window{}, since: map[health.PathID]time.Time{}, last: map[string]engine.Move{},
		nextRound: o.Start, rx: map[health.PathID]uint64{}, wg: map[string]*session{},
		failSwitches: o.FailSwitches,
	}
	m.Engine = engine.New(engine.Options{Self: o.Self, Rand: rand.New(rand.NewPCG(o.Seed, 1)), Selection: o.Selection, Facts: facts{m}})
	for peer := range o.Links {
		m.peers = append(m.peers, peer)
	}
	slices.Sort(m.peers) // map order would make the run depend on more than the seed
	for _, peer := range m.peers {
		key, ok := o.Keys[peer]
		if !ok {
			key = defaultPeerKey
		}
		spec := engine.PeerSpec{Name: peer, PublicKey: key, Probing: o.Health, Selection: o.Selection, Keepalive: true}
		for i, l := range o.Links[peer] {
			id := health.PathID{Peer: peer, Path: i}
			a := linkAddr(len(m.addrOf))
			m.addrOf[id], m.pathOf[a] = a, id
			spec.Paths = append(spec.Paths, engine.PathSpec{Name: l.Name, Addr: a})
		}
		m.wg[peer] = &session{}
		m.step(engine.SetPeer{Spec: spec, Initial: true})
		// The engine numbers a new peer's slots from 0 in path order: a
		// path's slot is its link's index, which the records rely on.
		if v, _ := m.Engine.Peer(peer); !slices.Equal(v.Slots, indices(len(spec.Paths))) {
			panic(fmt.Sprintf("sim: %s has slots %v, not its path indices", peer, v.Slots))
		}
	}
	return m
}

// linkAddr is the fake address of the n-th link: 192.0.2.1:51820 on.
func linkAddr(n int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + n%250)}), uint16(51820+n/250))
}

func indices(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Peers returns the peer names, sorted.
func (m *Mesh) Peers() []string { return m.peers }

// Links returns the links of a peer.
func (m *Mesh) Links(peer string) []*Link { return m.links[peer] }

// Addr is the address of a peer's link i.
func (m *Mesh) Addr(peer string, i int) netip.AddrPort {
	return m.addrOf[health.PathID{Peer: peer, Path: i}]
}

// Run simulates until end. After every wake whose steps had a path
// transition or a switch, it checks the selection invariant
// (CheckInvariant) and returns its first violation.
func (m *Mesh) Run(end time.Time) error {
	defer m.countSuppressed()
	for !m.Now.After(end) {
		if err := m.wake(); err != nil {
			return err
		}
		m.Now = m.next()
	}
	return nil
}

// wake does what is due at Now: sessions and handshakes, then answers
// arriving, then the housekeeping round, then a Tick. The invariant is
// checked after the Tick: between an answer and the Tick that follows it
// the engine has seen a path up but not yet chosen it.
func (m *Mesh) wake() error {
	m.changed = false
	m.handshakes()
	for len(m.air) > 0 && !m.air[0].At.After(m.Now) {
		m.step(heap.Pop(&m.air).(engine.Reply))
	}
	if !m.nextRound.After(m.Now) {
		m.step(m.housekeep())
		m.nextRound = m.nextRound.Add(HousekeepRound)
	}
	m.step(engine.Tick{})
	if m.changed { // only transitions and switches can break it
		return m.CheckInvariant()
	}
	return nil
}

// Step feeds one input to the engine at Now and carries out its Ready, as
// Run does with its own inputs (a test's engine.HoldAll, say).
func (m *Mesh) Step(in engine.Input) { m.step(in) }

func (m *Mesh) step(in engine.Input) {
	m.take(m.Engine.Step(m.Now, in))
	if m.switchAsked {
		m.switchAsked = false
		m.answerSwitch()
	}
}

// answerSwitch carries out the key switch the last step asked for: it
// fails while Options.FailSwitches lasts, else goes through.
func (m *Mesh) answerSwitch() {
	ks := &m.KeySwitches[len(m.KeySwitches)-1]
	if m.failSwitches > 0 {
		m.failSwitches--
		ks.Failed = true
		m.step(engine.SwitchFailed{})
		return
	}
	r, _ := m.Engine.Rotation(m.Now)
	m.step(engine.KeySwitched{Key: r.Next})
}

// next is the time of the next event: the engine's deadline, an answer's
// arrival, a handshake or the housekeeping round.
func (m *Mesh) next() time.Time {
	next := m.nextRound
	if d := m.Engine.NextDeadline(); !d.IsZero() && d.Before(next) {
		next = d
	}
	if len(m.air) > 0 && m.air[0].At.Before(next) {
		next = m.air[0].At
	}
	if len(m.attempts) > 0 && m.attempts[0].at.Before(next) {
		next = m.attempts[0].at
	}
	if !next.After(m.Now) {
		next = m.Now.Add(time.Microsecond)
	}
	return next
}

// housekeep is the round's Housekeep: the relay sends data to every peer
// all along (TxData grows every round, so no peer goes idle), and each
// link whose data arrived since the previous round counts one more packet
// from its address.
func (m *Mesh) housekeep() engine.Housekeep {
	m.tx++
	var h engine.Housekeep
	for _, peer := range m.peers {
		t := engine.Traffic{Peer: peer, TxData: m.tx}
		for i, l := range m.links[peer] {
			if !m.Demand {
				break
			}
			id := health.PathID{Peer: peer, Path: i}
			if l.LastRx(m.Now).After(m.lastRound) {
				m.rx[id]++
			}
			if n := m.rx[id]; n > 0 {
				t.Sources = append(t.Sources, engine.Source{Addr: m.addrOf[id], Packets: n})
			}
		}
		h.Peers = append(h.Peers, t)
	}
	m.lastRound = m.Now
	return h
}

// transmit sends probe p over its link: dropped if the link drops the
// request or the reply when it leaves, or by random loss on either leg.
func (m *Mesh) transmit(p engine.Probe) {
	l := m.links[p.ID.Peer][p.Path]
	rtt := l.Base
	if l.Jitter > 0 {
		rtt += time.Duration(m.rnd.Int64N(int64(2*l.Jitter)+1)) - l.Jitter
	}
	back := m.Now.Add(rtt / 2) // when the peer sends its reply
	lost := m.rnd.Float64() < l.Loss
	lost = m.rnd.Float64() < l.Loss || lost // draw both legs always: same randomness per probe
	if l.drops(m.Now) || l.drops(back) || lost {
		return
	}
	at := m.Now.Add(rtt)
	heap.Push(&m.air, engine.Reply{Peer: p.ID.Peer, Slot: p.ID.Path, Nonce: p.Nonce, Epoch: epoch, From: p.To, At: at})
}

// countSuppressed sums the probes replaced by traffic over every path.
func (m *Mesh) countSuppressed() {
	n := 0
	for _, peer := range m.peers {
		for i := range m.links[peer] {
			st, _ := m.Engine.Stats(peer, i)
			n += int(st.Suppressed)
		}
	}
	m.Suppressed = n
}

// arrivals are the answers on their way, a heap by arrival.
type arrivals []engine.Reply

func (a arrivals) Len() int           { return len(a) }
func (a arrivals) Less(i, j int) bool { return a[i].At.Before(a[j].At) }
func (a arrivals) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }
func (a *arrivals) Push(x any)        { *a = append(*a, x.(engine.Reply)) }
func (a *arrivals) Pop() any {
	old := *a
	x := old[len(old)-1]
	*a = old[:len(old)-1]
	return x
}
