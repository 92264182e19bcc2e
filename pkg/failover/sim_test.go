package failover_test

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/pkg/failover"
	"github.com/liqo-relay/relay/pkg/health"
)

// This file is a seeded, simulated mesh: one relay probing many peers over
// scripted links, driving health.Monitor and failover.Selector with fake
// time exactly as the agent does. Time jumps from one event to the next
// (probe due, reply arrival, selector deadline), so the "tick granularity"
// of detection is zero: a down transition is reported at its deadline.

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type window struct{ from, to time.Time }

// link is one path to one peer: a round-trip time base+U(-jitter,jitter),
// independent loss per leg, and cuts during which both legs drop.
type link struct {
	name   string
	base   time.Duration
	jitter time.Duration
	loss   float64
	cuts   []window
}

func (l *link) cut(at time.Time) bool {
	for _, w := range l.cuts {
		if !at.Before(w.from) && at.Before(w.to) {
			return true
		}
	}
	return false
}

func (l *link) maxRTT() time.Duration { return l.base + l.jitter }

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

type mesh struct {
	t     *testing.T
	rnd   *rand.Rand
	hs    health.Settings
	mon   *health.Monitor
	sel   *failover.Selector
	peers []string
	links map[string][]*link
	air   arrivals
	now   time.Time

	events []failover.Event
	downs  []health.Transition
	active map[health.PathID][]window // when each path was active (for detection bounds)
	since  map[health.PathID]time.Time
}

func newMesh(t *testing.T, seed uint64, fs failover.Settings, links map[string][]*link) *mesh {
	m := &mesh{
		t:      t,
		rnd:    rand.New(rand.NewPCG(seed, 99)),
		hs:     health.DefaultSettings(),
		mon:    health.NewMonitor(rand.New(rand.NewPCG(seed, 1))),
		sel:    failover.New(fs),
		links:  links,
		now:    t0,
		active: map[health.PathID][]window{},
		since:  map[health.PathID]time.Time{},
	}
	for peer := range links {
		m.peers = append(m.peers, peer)
	}
	slices.Sort(m.peers) // map order would make SetPath order, and so the run, random
	for _, peer := range m.peers {
		ls := links[peer]
		var specs []failover.PathSpec
		for i, l := range ls {
			m.mon.SetPath(health.PathID{Peer: peer, Path: i}, m.hs)
			specs = append(specs, failover.PathSpec{Name: l.name})
		}
		m.sel.SetPeer(peer, specs, fs)
	}
	return m
}

func (m *mesh) idOf(peer, name string) health.PathID {
	for i, l := range m.links[peer] {
		if l.name == name {
			return health.PathID{Peer: peer, Path: i}
		}
	}
	m.t.Fatalf("no path %s/%s", peer, name)
	return health.PathID{}
}

func (m *mesh) observe(id health.PathID) {
	st, _ := m.mon.Stats(id)
	m.sel.Observe(id.Peer, m.links[id.Peer][id.Path].name,
		failover.Observation{Up: st.State == health.Up, SRTT: st.SRTT, Loss: st.Loss}, m.now)
}

func (m *mesh) setActive(id health.PathID, on bool) {
	m.mon.SetActive(id, on)
	if on {
		m.since[id] = m.now
	} else if s, ok := m.since[id]; ok {
		m.active[id] = append(m.active[id], window{s, m.now})
		delete(m.since, id)
	}
}

// run simulates until end, checking the selection invariant after every
// step.
func (m *mesh) run(end time.Time) {
	var probes []health.Probe
	var trans []health.Transition
	for !m.now.After(end) {
		probes = m.mon.Due(m.now, probes[:0])
		for _, p := range probes {
			l := m.links[p.ID.Peer][p.ID.Path]
			rtt := l.base
			if l.jitter > 0 {
				rtt += time.Duration(m.rnd.Int64N(int64(2*l.jitter)+1)) - l.jitter
			}
			back := m.now.Add(rtt / 2) // when the peer sends its reply
			if l.cut(m.now) || l.cut(back) || m.rnd.Float64() < l.loss || m.rnd.Float64() < l.loss {
				continue
			}
			heap.Push(&m.air, arrival{m.now.Add(rtt), p})
		}
		for len(m.air) > 0 && !m.air[0].at.After(m.now) {
			a := heap.Pop(&m.air).(arrival)
			if _, ok := m.mon.OnReply(a.p.ID, a.p.Nonce, m.now); ok {
				m.observe(a.p.ID)
			}
		}
		trans = m.mon.Tick(m.now, trans[:0])
		changed := len(trans) > 0
		for _, tr := range trans {
			m.observe(tr.ID)
			if !tr.Up {
				m.downs = append(m.downs, tr)
			}
		}
		for _, ev := range m.sel.Tick(m.now) {
			changed = true
			m.events = append(m.events, ev)
			if ev.From != "" {
				m.setActive(m.idOf(ev.Peer, ev.From), false)
			}
			if ev.To != "" {
				m.setActive(m.idOf(ev.Peer, ev.To), true)
			}
		}
		if changed { // only transitions and switches can break it
			m.checkInvariant()
		}

		next := m.mon.NextDeadline()
		if len(m.air) > 0 && m.air[0].at.Before(next) {
			next = m.air[0].at
		}
		if d := m.sel.NextDeadline(); !d.IsZero() && d.Before(next) {
			next = d
		}
		if !next.After(m.now) {
			next = m.now.Add(time.Microsecond)
		}
		m.now = next
	}
}

// checkInvariant: never an active path that is down while another path of
// the same peer is up and usable (not dampened).
func (m *mesh) checkInvariant() {
	for _, peer := range m.peers {
		act, ok := m.sel.Active(peer)
		for i, l := range m.links[peer] {
			st, _ := m.mon.Stats(health.PathID{Peer: peer, Path: i})
			usable := st.State == health.Up && m.sel.PathState(peer, l.name) == failover.Up
			if !usable {
				continue
			}
			if !ok {
				m.t.Fatalf("%v: %s unreachable while %s is up", m.now.Sub(t0), peer, l.name)
			}
			a, _ := m.mon.Stats(m.idOf(peer, act))
			if a.State == health.Down {
				m.t.Fatalf("%v: %s active on %s, which is down, while %s is up", m.now.Sub(t0), peer, act, l.name)
			}
		}
	}
}

func (m *mesh) wasActiveThroughout(id health.PathID, w window) bool {
	ws := m.active[id]
	if s, ok := m.since[id]; ok {
		ws = append(ws, window{s, m.now.Add(time.Hour)})
	}
	for _, a := range ws {
		if !a.from.After(w.from) && !a.to.Before(w.to) {
			return true
		}
	}
	return false
}

// checkDetection: every cut of a path that was up is detected within
// DetectMultiplier x interval + one RTT of its start, where the interval is
// the active one if the path was active from the cut to the detection, and
// the idle one otherwise. Returns how many cuts were checked.
func (m *mesh) checkDetection() (checked int, worst time.Duration) {
	for _, peer := range m.peers {
		for i, l := range m.links[peer] {
			id := health.PathID{Peer: peer, Path: i}
			for _, c := range l.cuts {
				if c.to.After(m.now) || c.to.Sub(c.from) < 4*m.hs.IdleInterval {
					continue // not over, or too short for an idle path to notice
				}
				var td time.Time
				for _, d := range m.downs {
					if d.ID == id && !d.At.Before(c.from) {
						td = d.At
						break
					}
				}
				if td.IsZero() || td.After(c.to) {
					// Not detected during the cut: acceptable only if the
					// path was already down when it started.
					if m.wasDownAt(id, c.from) {
						continue
					}
					m.t.Fatalf("%s/%s: cut at %v never detected", peer, l.name, c.from.Sub(t0))
				}
				if m.wasDownAt(id, c.from) {
					continue
				}
				iv := m.hs.IdleInterval
				if m.wasActiveThroughout(id, window{c.from, td}) {
					iv = m.hs.Interval
				}
				bound := time.Duration(m.hs.DetectMultiplier)*iv + l.maxRTT()
				took := td.Sub(c.from)
				if took > bound {
					m.t.Errorf("%s/%s: cut at %v detected after %v, bound %v", peer, l.name, c.from.Sub(t0), took, bound)
				}
				if iv == m.hs.Interval {
					worst = max(worst, took)
				}
				checked++
			}
		}
	}
	return checked, worst
}

// wasDownAt: the last transition of id at or before t was a down (or none
// was up yet). Approximated from the recorded downs and the cut itself:
// a path whose previous cut overlaps t is down.
func (m *mesh) wasDownAt(id health.PathID, t time.Time) bool {
	l := m.links[id.Peer][id.Path]
	for _, c := range l.cuts {
		if c.from.Before(t) && !c.to.Before(t.Add(-time.Duration(m.hs.DetectMultiplier)*m.hs.IdleInterval)) {
			return true // came back too recently to be up again
		}
	}
	return t.Sub(t0) < 2*m.hs.IdleInterval // still starting
}

// randomCuts scatters cuts over [start, end): gaps of 5..40 s, lengths of
// 0.5..8 s.
func randomCuts(r *rand.Rand, start, end time.Time) []window {
	var ws []window
	at := start.Add(time.Duration(r.Int64N(int64(20 * time.Second))))
	for at.Before(end) {
		d := 500*time.Millisecond + time.Duration(r.Int64N(int64(7500*time.Millisecond)))
		ws = append(ws, window{at, at.Add(d)})
		at = at.Add(d + 5*time.Second + time.Duration(r.Int64N(int64(35*time.Second))))
	}
	return ws
}

func randomMesh(seed uint64, peers int, dur time.Duration) map[string][]*link {
	r := rand.New(rand.NewPCG(seed, 5))
	links := map[string][]*link{}
	names := []string{"direct", "consumer", "backup"}
	for i := range peers {
		var ls []*link
		for j := range 2 + r.IntN(2) {
			ls = append(ls, &link{
				name:   names[j],
				base:   time.Duration(5+r.IntN(60)) * time.Millisecond,
				jitter: time.Duration(r.IntN(5)) * time.Millisecond,
				loss:   []float64{0, 0, 0.001, 0.01}[r.IntN(4)],
				cuts:   randomCuts(r, t0.Add(5*time.Second), t0.Add(dur-15*time.Second)),
			})
		}
		links[fmt.Sprintf("peer-%02d", i)] = ls
	}
	return links
}

func TestMeshCutsDetectedAndFailedOver(t *testing.T) {
	const dur = 150 * time.Second
	seeds := []uint64{1, 2, 3}
	if raceEnabled || testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			m := newMesh(t, seed, failover.DefaultSettings(), randomMesh(seed, 20, dur))
			m.run(t0.Add(dur))
			n, worst := m.checkDetection()
			if n < 50 {
				t.Fatalf("only %d cuts checked: the scenario does not exercise detection", n)
			}
			reasons := map[failover.Reason]int{}
			for _, ev := range m.events {
				reasons[ev.Reason]++
			}
			if reasons[failover.ReasonDown] == 0 {
				t.Fatalf("no failover at all: %v", reasons)
			}
			t.Logf("%d cuts checked, worst active-path detection %v; events %v", n, worst, reasons)
		})
	}
}

func TestMeshDeterministic(t *testing.T) {
	trace := func() string {
		m := newMesh(t, 7, failover.DefaultSettings(), randomMesh(7, 10, 60*time.Second))
		m.run(t0.Add(60 * time.Second))
		var b strings.Builder
		for _, ev := range m.events {
			fmt.Fprintf(&b, "%v %v\n", ev.At.Sub(t0), ev)
		}
		return b.String()
	}
	a, b := trace(), trace()
	if a != b || a == "" {
		t.Fatalf("two runs with the same seed differ (or are empty):\n%s\n---\n%s", a, b)
	}
}

// Jitter inside the hysteresis margins must never cause a switch. Two
// cases: equal base RTTs with per-probe jitter as large as the 2 ms margin,
// and bases 1 ms apart with +-1 ms. Smoothing (SRTT, alpha 1/8) keeps the
// cost difference well inside the margins, so the count must be zero.
func TestMeshJitterInsideMarginsNoSwitch(t *testing.T) {
	cases := []struct {
		name         string
		direct, cons time.Duration
		jitter       time.Duration
	}{
		{"equal base, 2ms jitter", 20 * time.Millisecond, 20 * time.Millisecond, 2 * time.Millisecond},
		{"1ms apart, 1ms jitter", 20 * time.Millisecond, 21 * time.Millisecond, time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			links := map[string][]*link{}
			for i := range 10 {
				links[fmt.Sprintf("peer-%02d", i)] = []*link{
					{name: "direct", base: c.direct, jitter: c.jitter},
					{name: "consumer", base: c.cons, jitter: c.jitter},
				}
			}
			m := newMesh(t, 11, failover.DefaultSettings(), links)
			m.run(t0.Add(3 * time.Minute))
			for _, ev := range m.events {
				if ev.Reason != failover.ReasonInitial {
					t.Errorf("switch under jitter: %v at %v", ev, ev.At.Sub(t0))
				}
			}
			if len(m.events) != 10 {
				t.Fatalf("%d events, want 10 initial choices", len(m.events))
			}
		})
	}
}

// The naive selector, on the first of those link sets, does switch: the
// test above can fail.
func TestMeshJitterNaiveSwitches(t *testing.T) {
	links := map[string][]*link{"peer-00": {
		{name: "direct", base: 20 * time.Millisecond, jitter: 2 * time.Millisecond},
		{name: "consumer", base: 20 * time.Millisecond, jitter: 2 * time.Millisecond},
	}}
	fs := failover.DefaultSettings()
	fs.Naive = true
	m := newMesh(t, 11, fs, links)
	m.run(t0.Add(2 * time.Minute))
	if len(m.events) < 10 {
		t.Fatalf("naive selector switched only %d times under jitter", len(m.events))
	}
	t.Logf("naive: %d switches in 2 min", len(m.events))
}
