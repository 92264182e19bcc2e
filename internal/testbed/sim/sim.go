// Package sim is a deterministic, simulated mesh for testing path
// selection: one relay probes many peers over scripted links (latency,
// jitter, loss, cuts) and drives health.Monitor and failover.Selector with
// fake time, exactly as the agent does with real packets and a real clock.
// Like raft's in-memory network, it lets tests cut and restore paths and
// check properties over thousands of decisions, reproducibly from a seed.
//
// Time jumps from one event to the next (a probe due, a reply arriving, a
// selector deadline), so detection has no tick granularity: a down
// transition is reported at its deadline.
package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// Window is a time interval [From, To).
type Window struct{ From, To time.Time }

func (w Window) contains(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

// Link is one path to one peer: a round-trip time Base + U(-Jitter, +Jitter)
// per probe, independent loss Loss on each leg, and Cuts during which both
// legs drop everything.
type Link struct {
	Name   string
	Base   time.Duration
	Jitter time.Duration
	Loss   float64
	Cuts   []Window
	// Traffic are the windows during which the peer's authenticated data
	// arrives continuously over the link (unless it is cut). It is seen
	// only in demand mode (Mesh.Demand), as the shell sees it: at each
	// probe time, as the arrival time of the latest data.
	Traffic []Window
}

// LastRx is the arrival time of the latest data over the link at or before
// t (zero: none): the supremum of the instants in a traffic window and in
// no cut. That set is a union of intervals, so the supremum is t itself or
// the end of one of them.
func (l *Link) LastRx(t time.Time) time.Time {
	flows := func(at time.Time) bool {
		if l.Cut(at) {
			return false
		}
		for _, w := range l.Traffic {
			if w.contains(at) {
				return true
			}
		}
		return false
	}
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
func (l *Link) Cut(at time.Time) bool {
	for _, w := range l.Cuts {
		if w.contains(at) {
			return true
		}
	}
	return false
}

// MaxRTT is the largest round-trip time the link produces.
func (l *Link) MaxRTT() time.Duration { return l.Base + l.Jitter }

type arrival struct {
	at time.Time
	p  health.Probe
}

type arrivals []arrival

func (a arrivals) Len() int           { return len(a) }
func (a arrivals) Less(i, j int) bool { return a[i].at.Before(a[j].at) }
func (a arrivals) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }
func (a *arrivals) Push(x any)        { *a = append(*a, x.(arrival)) }
func (a *arrivals) Pop() any {
	old := *a
	x := old[len(old)-1]
	*a = old[:len(old)-1]
	return x
}

// Mesh is the simulated relay and its links.
type Mesh struct {
	Health   health.Settings
	Monitor  *health.Monitor
	Selector *failover.Selector
	Now      time.Time
	// Demand turns on demand mode: every due probe is first offered to
	// Monitor.Demand with its link's LastRx, and sent only if kept.
	Demand bool

	// Events are every selection decision so far; Downs every down
	// transition of a path.
	Events []failover.Event
	Downs  []health.Transition
	// DownJitter is, for each of Downs, the path's RTT jitter estimate at
	// the down: its deadline's margin (health.DeadlineMargin) came from it.
	DownJitter []time.Duration
	// Ups are every up transition, Answers every probe answer that the
	// Monitor matched, and Suppressed every probe replaced by traffic.
	Ups        []health.Transition
	Answers    map[health.PathID][]time.Time
	Suppressed int

	rnd    *rand.Rand
	peers  []string
	links  map[string][]*Link
	air    arrivals
	active map[health.PathID][]Window // closed activity windows per path
	since  map[health.PathID]time.Time
}

// New builds a mesh starting at start. Every link of every peer becomes a
// path probed with hs; fs are the selection settings of every peer. The
// seed drives link jitter and loss and the Monitor's schedule.
func New(seed uint64, start time.Time, hs health.Settings, fs failover.Settings, links map[string][]*Link) *Mesh {
	m := &Mesh{
		Health:   hs,
		Monitor:  health.NewMonitor(rand.New(rand.NewPCG(seed, 1))),
		Selector: failover.New(fs),
		Now:      start,
		rnd:      rand.New(rand.NewPCG(seed, 99)),
		links:    links,
		active:   map[health.PathID][]Window{},
		Answers:  map[health.PathID][]time.Time{},
		since:    map[health.PathID]time.Time{},
	}
	for peer := range links {
		m.peers = append(m.peers, peer)
	}
	slices.Sort(m.peers) // map order would make the run depend on more than the seed
	for _, peer := range m.peers {
		var specs []failover.PathSpec
		for i, l := range links[peer] {
			m.Monitor.SetPath(health.PathID{Peer: peer, Path: i}, hs)
			specs = append(specs, failover.PathSpec{Name: l.Name})
		}
		m.Selector.SetPeer(peer, specs, fs)
	}
	return m
}

// Peers returns the peer names, sorted.
func (m *Mesh) Peers() []string { return m.peers }

// Links returns the links of a peer.
func (m *Mesh) Links(peer string) []*Link { return m.links[peer] }

func (m *Mesh) idOf(peer, name string) health.PathID {
	for i, l := range m.links[peer] {
		if l.Name == name {
			return health.PathID{Peer: peer, Path: i}
		}
	}
	panic(fmt.Sprintf("sim: no path %s/%s", peer, name)) // the selector only knows our names
}

func (m *Mesh) observe(id health.PathID) {
	st, _ := m.Monitor.Stats(id)
	m.Selector.Observe(id.Peer, m.links[id.Peer][id.Path].Name,
		failover.Observation{Up: st.State == health.Up, SRTT: st.SRTT, Loss: st.Loss, LastRTT: st.LastRTT}, m.Now)
}

func (m *Mesh) setActive(id health.PathID, on bool) {
	m.Monitor.SetActive(id, on)
	if on {
		m.since[id] = m.Now
	} else if s, ok := m.since[id]; ok {
		m.active[id] = append(m.active[id], Window{s, m.Now})
		delete(m.since, id)
	}
}

// Run simulates until end. After every step that changed a path's state or
// the selection, it checks the selection invariant and returns its first
// violation.
func (m *Mesh) Run(end time.Time) error {
	var probes []health.Probe
	var trans []health.Transition
	for !m.Now.After(end) {
		probes = m.Monitor.Due(m.Now, probes[:0])
		for _, p := range probes {
			if m.Demand && m.Monitor.Demand(p, m.links[p.ID.Peer][p.ID.Path].LastRx(m.Now), m.Now) {
				m.Suppressed++
				continue
			}
			m.transmit(p)
		}
		for len(m.air) > 0 && !m.air[0].at.After(m.Now) {
			a := heap.Pop(&m.air).(arrival)
			if _, ok := m.Monitor.OnReply(a.p.ID, a.p.Nonce, m.Now); ok {
				m.Answers[a.p.ID] = append(m.Answers[a.p.ID], m.Now)
				m.observe(a.p.ID)
			}
		}
		trans = m.Monitor.Tick(m.Now, trans[:0])
		changed := len(trans) > 0
		for _, tr := range trans {
			m.observe(tr.ID)
			if !tr.Up {
				m.Downs = append(m.Downs, tr)
				st, _ := m.Monitor.Stats(tr.ID)
				m.DownJitter = append(m.DownJitter, st.Jitter)
			} else {
				m.Ups = append(m.Ups, tr)
			}
		}
		for _, ev := range m.Selector.Tick(m.Now) {
			changed = true
			m.Events = append(m.Events, ev)
			if ev.From != "" {
				m.setActive(m.idOf(ev.Peer, ev.From), false)
			}
			if ev.To != "" {
				m.setActive(m.idOf(ev.Peer, ev.To), true)
			}
		}
		if changed { // only transitions and switches can break it
			if err := m.CheckInvariant(); err != nil {
				return err
			}
		}
		m.Now = m.next()
	}
	return nil
}

// transmit sends probe p over its link: dropped if the link is cut when the
// request or the reply leaves, or by random loss on either leg.
func (m *Mesh) transmit(p health.Probe) {
	l := m.links[p.ID.Peer][p.ID.Path]
	rtt := l.Base
	if l.Jitter > 0 {
		rtt += time.Duration(m.rnd.Int64N(int64(2*l.Jitter)+1)) - l.Jitter
	}
	back := m.Now.Add(rtt / 2) // when the peer sends its reply
	lost := m.rnd.Float64() < l.Loss
	lost = m.rnd.Float64() < l.Loss || lost // draw both legs always: same randomness per probe
	if l.Cut(m.Now) || l.Cut(back) || lost {
		return
	}
	heap.Push(&m.air, arrival{m.Now.Add(rtt), p})
}

func (m *Mesh) next() time.Time {
	next := m.Monitor.NextDeadline()
	if len(m.air) > 0 && m.air[0].at.Before(next) {
		next = m.air[0].at
	}
	if d := m.Selector.NextDeadline(); !d.IsZero() && d.Before(next) {
		next = d
	}
	if !next.After(m.Now) {
		next = m.Now.Add(time.Microsecond)
	}
	return next
}

// CheckInvariant: never an active path that is down while another path of
// the same peer is up and usable (not dampened), and never an unreachable
// peer with a usable path.
func (m *Mesh) CheckInvariant() error {
	for _, peer := range m.peers {
		act, ok := m.Selector.Active(peer)
		for i, l := range m.links[peer] {
			st, _ := m.Monitor.Stats(health.PathID{Peer: peer, Path: i})
			if st.State != health.Up || m.Selector.PathState(peer, l.Name) != failover.Up {
				continue
			}
			if !ok {
				return fmt.Errorf("%v: %s unreachable while %s is up", m.Now, peer, l.Name)
			}
			if a, _ := m.Monitor.Stats(m.idOf(peer, act)); a.State == health.Down {
				return fmt.Errorf("%v: %s active on %s, which is down, while %s is up", m.Now, peer, act, l.Name)
			}
		}
	}
	return nil
}
