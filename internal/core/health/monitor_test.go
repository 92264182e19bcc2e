package health

import (
	"fmt"
	randv1 "math/rand"
	"math/rand/v2"
	"testing"
	"time"
)

func newTestMonitor(seed uint64) *Monitor {
	return NewMonitor(rand.New(rand.NewPCG(seed, 1)))
}

var pa = PathID{Peer: "b", Path: 0}

func TestMonitorProbeAnswerUp(t *testing.T) {
	m := newTestMonitor(1)
	m.SetPath(pa, Settings{})
	if !m.NextDeadline().Before(t0) {
		t.Fatalf("a new path must be due at once, NextDeadline = %v", m.NextDeadline())
	}
	probes := m.Due(t0, nil)
	if len(probes) != 1 || probes[0].ID != pa {
		t.Fatalf("Due = %+v, want one probe on %v", probes, pa)
	}
	// Idle: the next probe is 375..500ms later.
	if d := m.NextDeadline().Sub(t0); d < 370*time.Millisecond || d > 500*time.Millisecond {
		t.Fatalf("next idle probe in %v, want 370..500ms (75..100%%, rounded down to the 5ms probe grid)", d)
	}
	if _, ok := m.OnReply(pa, probes[0].Nonce+1, t0.Add(time.Millisecond)); ok {
		t.Fatal("reply with a nonce never sent was accepted")
	}
	rtt, ok := m.OnReply(pa, probes[0].Nonce, t0.Add(20*time.Millisecond))
	if !ok || rtt != 20*time.Millisecond {
		t.Fatalf("OnReply = %v, %v; want 20ms, true", rtt, ok)
	}
	if _, ok := m.OnReply(pa, probes[0].Nonce, t0.Add(21*time.Millisecond)); ok {
		t.Fatal("replayed reply was accepted")
	}
	tr := m.Tick(t0.Add(21*time.Millisecond), nil)
	if len(tr) != 1 || !tr[0].Up || tr[0].ID != pa || !tr[0].At.Equal(t0.Add(20*time.Millisecond)) {
		t.Fatalf("Tick = %+v, want up at 20ms", tr)
	}
	st, _ := m.Stats(pa)
	if st.State != Up || st.SRTT != 20*time.Millisecond || st.ProbesSent != 1 || st.ProbesLost != 0 {
		t.Fatalf("Stats = %+v", st)
	}
}

// drive runs m from `from` to `to`, answering every probe after rtt unless
// answer returns false, and returns every transition.
func drive(m *Monitor, from, to time.Time, rtt time.Duration, answer func(p Probe, at time.Time) bool) []Transition {
	type inflight struct {
		p  Probe
		at time.Time
	}
	var q []inflight
	var trans []Transition
	var probes []Probe
	now := from
	for !now.After(to) {
		probes = m.Due(now, probes[:0])
		for _, p := range probes {
			if answer(p, now) {
				q = append(q, inflight{p, now.Add(rtt)})
			}
		}
		for len(q) > 0 && !q[0].at.After(now) {
			m.OnReply(q[0].p.ID, q[0].p.Nonce, q[0].at)
			q = q[1:]
		}
		trans = m.Tick(now, trans)
		next := m.NextDeadline()
		if len(q) > 0 && q[0].at.Before(next) {
			next = q[0].at
		}
		if !next.After(now) {
			next = now.Add(time.Nanosecond)
		}
		now = next
	}
	return trans
}

func TestMonitorActiveScheduleAndDetection(t *testing.T) {
	m := newTestMonitor(2)
	m.SetPath(pa, Settings{})
	m.SetActive(pa, true)
	cut := t0.Add(5 * time.Second)
	var sends []time.Time
	tr := drive(m, t0, t0.Add(8*time.Second), 10*time.Millisecond, func(p Probe, at time.Time) bool {
		sends = append(sends, at)
		return at.Before(cut)
	})
	for i := 1; i < len(sends); i++ {
		if d := sends[i].Sub(sends[i-1]); d < 70*time.Millisecond || d > 100*time.Millisecond {
			t.Fatalf("probe %d sent %v after the previous, want 70..100ms (75..100%%, rounded down to the 5ms grid)", i, d)
		}
	}
	if len(tr) != 2 || !tr[0].Up || tr[1].Up {
		t.Fatalf("transitions %+v, want up then down", tr)
	}
	// The last answer arrived before cut+rtt; detection within 300ms of it.
	if d := tr[1].At.Sub(cut); d <= 200*time.Millisecond || d > 310*time.Millisecond {
		t.Fatalf("detected %v after the cut, want within detect time (300ms) + rtt (10ms)", d)
	}
	st, _ := m.Stats(pa)
	if st.State != Down || st.ProbesLost == 0 || st.ProbesLost > st.ProbesSent {
		t.Fatalf("Stats = %+v", st)
	}
}

func TestMonitorComesBackAfterThreeAnswers(t *testing.T) {
	m := newTestMonitor(3)
	m.SetPath(pa, Settings{})
	m.SetActive(pa, true)
	cutFrom, cutTo := t0.Add(time.Second), t0.Add(2*time.Second)
	var answered []time.Time
	tr := drive(m, t0, t0.Add(3*time.Second), 5*time.Millisecond, func(p Probe, at time.Time) bool {
		ok := at.Before(cutFrom) || !at.Before(cutTo)
		if ok && !at.Before(cutTo) {
			answered = append(answered, at)
		}
		return ok
	})
	if len(tr) != 3 || !tr[0].Up || tr[1].Up || !tr[2].Up {
		t.Fatalf("transitions %+v, want up, down, up", tr)
	}
	if want := answered[2].Add(5 * time.Millisecond); !tr[2].At.Equal(want) {
		t.Fatalf("back up at %v, want at the third answer %v", tr[2].At.Sub(t0), want.Sub(t0))
	}
}

func TestMonitorLossCountedAtExpiry(t *testing.T) {
	m := newTestMonitor(4)
	m.SetPath(pa, Settings{Interval: 100 * time.Millisecond, IdleInterval: 100 * time.Millisecond})
	drive(m, t0, t0.Add(10*time.Second), 0, func(Probe, time.Time) bool { return false })
	st, _ := m.Stats(pa)
	pending := st.ProbesSent - st.ProbesLost
	// Expiry is 2 x 300ms: at most 600/75 + 1 = 9 probes can be pending.
	if pending == 0 || pending > 9 {
		t.Fatalf("sent %d lost %d: %d pending, want 1..9", st.ProbesSent, st.ProbesLost, pending)
	}
	if st.Loss != 1 {
		t.Fatalf("Loss = %v, want 1", st.Loss)
	}
}

func TestMonitorOutstandingBounded(t *testing.T) {
	m := newTestMonitor(5)
	// Expiry of 2 x 10 x 100ms = 2s holds ~20 probes, more than the table:
	// the oldest are evicted as lost.
	m.SetPath(pa, Settings{Interval: 100 * time.Millisecond, IdleInterval: 100 * time.Millisecond, DetectMultiplier: 10})
	drive(m, t0, t0.Add(5*time.Second), 0, func(Probe, time.Time) bool { return false })
	st, _ := m.Stats(pa)
	if pending := st.ProbesSent - st.ProbesLost; pending != maxOutstanding {
		t.Fatalf("pending %d, want the bound %d", pending, maxOutstanding)
	}
}

func TestMonitorRemoveAndEpochs(t *testing.T) {
	m := newTestMonitor(6)
	pb := PathID{Peer: "b", Path: 1}
	m.SetPath(pa, Settings{})
	m.SetPath(pb, Settings{})
	if m.ObserveEpoch("b", 7) {
		t.Fatal("first epoch reported as a restart")
	}
	if m.ObserveEpoch("b", 7) {
		t.Fatal("same epoch reported as a restart")
	}
	if !m.ObserveEpoch("b", 8) {
		t.Fatal("new epoch not reported")
	}
	if m.ObserveEpoch("stranger", 1) || m.ObserveEpoch("stranger", 2) {
		t.Fatal("epochs of unknown peers must be ignored")
	}
	m.RemovePath(pa)
	if got := m.Due(t0, nil); len(got) != 1 || got[0].ID != pb {
		t.Fatalf("Due after removing %v = %+v", pa, got)
	}
	m.RemovePath(pb)
	if !m.NextDeadline().IsZero() {
		t.Fatal("NextDeadline with no paths must be zero")
	}
	m.SetPath(pa, Settings{})
	if m.ObserveEpoch("b", 8) {
		t.Fatal("epoch must be forgotten with the peer's last path")
	}
	if _, ok := m.Stats(pb); ok {
		t.Fatal("Stats of a removed path")
	}
}

func TestMonitorSetPathKeepsState(t *testing.T) {
	m := newTestMonitor(7)
	m.SetPath(pa, Settings{})
	p := m.Due(t0, nil)
	m.OnReply(pa, p[0].Nonce, t0.Add(10*time.Millisecond))
	m.SetPath(pa, Settings{})                                // unchanged
	m.SetPath(pa, Settings{Interval: 50 * time.Millisecond}) // changed
	st, _ := m.Stats(pa)
	if st.State != Up || st.SRTT != 10*time.Millisecond || st.ProbesSent != 1 {
		t.Fatalf("state lost by SetPath: %+v", st)
	}
	if !m.NextDeadline().Before(t0) {
		t.Fatal("changed settings must be applied at the next Due or Tick")
	}
	// Probed at once, then on the new (idle: 5 x 50ms) schedule, not the
	// old 375..500ms one.
	at := t0.Add(20 * time.Millisecond)
	if got := m.Due(at, nil); len(got) != 1 {
		t.Fatalf("Due after a settings change = %+v, want one probe", got)
	}
	if d := m.NextDeadline().Sub(at); d < 182*time.Millisecond || d > 250*time.Millisecond {
		t.Fatalf("next probe in %v, want 182..250ms (75..100%%, rounded down to the 5ms grid)", d)
	}
}

// meshSim drives a Monitor over peers x paths with a constant RTT and no
// loss, for the zero-alloc test and the benchmark. Its reply queue is a
// preallocated ring so that only the Monitor's allocations are measured.
type meshSim struct {
	m      *Monitor
	rtt    time.Duration
	now    time.Time
	probes []Probe
	trans  []Transition
	q      []Probe
	qAt    []time.Time
	head   int
	n      int
	sent   int
}

func newMeshSim(peers, paths int) *meshSim {
	s := &meshSim{m: newTestMonitor(9), rtt: 10 * time.Millisecond, now: t0,
		q: make([]Probe, 1<<16), qAt: make([]time.Time, 1<<16)}
	for i := range peers {
		for j := range paths {
			id := PathID{Peer: fmt.Sprintf("peer-%04d", i), Path: j}
			s.m.SetPath(id, Settings{})
			s.m.SetActive(id, j == 0)
		}
	}
	return s
}

// run advances simulated time by d.
func (s *meshSim) run(d time.Duration) {
	end := s.now.Add(d)
	for s.now.Before(end) {
		s.probes = s.m.Due(s.now, s.probes[:0])
		for _, p := range s.probes {
			i := (s.head + s.n) % len(s.q)
			s.q[i], s.qAt[i] = p, s.now.Add(s.rtt)
			s.n++
		}
		s.sent += len(s.probes)
		for s.n > 0 && !s.qAt[s.head].After(s.now) {
			if _, ok := s.m.OnReply(s.q[s.head].ID, s.q[s.head].Nonce, s.qAt[s.head]); !ok {
				panic("reply not matched")
			}
			s.head = (s.head + 1) % len(s.q)
			s.n--
		}
		s.trans = s.m.Tick(s.now, s.trans[:0])
		next := s.m.NextDeadline()
		if s.n > 0 && s.qAt[s.head].Before(next) {
			next = s.qAt[s.head]
		}
		if !next.After(s.now) {
			next = s.now.Add(time.Nanosecond)
		}
		s.now = next
	}
}

func TestMonitorSteadyStateZeroAlloc(t *testing.T) {
	s := newMeshSim(50, 3)
	s.run(5 * time.Second) // warm up: maps, queues and slices at their size
	if n := testing.AllocsPerRun(5, func() { s.run(time.Second) }); n != 0 {
		t.Fatalf("allocs per simulated second = %v, want 0", n)
	}
	for i := range 50 {
		st, _ := s.m.Stats(PathID{Peer: fmt.Sprintf("peer-%04d", i), Path: 2})
		if st.State != Up || st.ProbesLost != 0 {
			t.Fatalf("peer %d idle path: %+v", i, st)
		}
	}
}

// BenchmarkMonitor1000x3: one iteration is one simulated second of 1000
// peers x 3 paths (one active at 100ms, two idle at 1s), every probe
// answered after 10ms.
func BenchmarkMonitor1000x3(b *testing.B) {
	s := newMeshSim(1000, 3)
	s.run(3 * time.Second)
	s.sent = 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.run(time.Second)
	}
	b.ReportMetric(float64(s.sent)/float64(b.N), "probes/simsec")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(s.sent), "ns/probe")
}

func TestMonitorPassiveKeepsUp(t *testing.T) {
	m := newTestMonitor(12)
	m.SetPath(pa, Settings{})
	m.SetActive(pa, true)
	p := m.Due(t0, nil)
	m.OnReply(pa, p[0].Nonce, t0.Add(time.Millisecond))
	// Probes go unanswered from now on, but WireGuard data keeps arriving
	// every 50ms for 2s: the path stays up, then goes down 300ms after the
	// last data, plus the jitter margin (one 1ms sample: jitter 0.5ms, 2ms).
	var tr []Transition
	for at := t0.Add(50 * time.Millisecond); !at.After(t0.Add(3 * time.Second)); at = at.Add(10 * time.Millisecond) {
		m.Due(at, nil)
		if !at.After(t0.Add(2*time.Second)) && at.Sub(t0)%(50*time.Millisecond) == 0 {
			m.OnPassive(pa, at)
		}
		tr = m.Tick(at, tr)
	}
	if len(tr) != 2 || !tr[0].Up || tr[1].Up {
		t.Fatalf("transitions %+v, want up then down", tr)
	}
	if want := t0.Add(2300*time.Millisecond + DeadlineMargin(500*time.Microsecond, 300*time.Millisecond)); !tr[1].At.Equal(want) {
		t.Fatalf("down at %v, want %v", tr[1].At.Sub(t0), want.Sub(t0))
	}
}

func TestMonitorActivationGivesFullDetectTime(t *testing.T) {
	m := newTestMonitor(13)
	m.SetPath(pa, Settings{})
	p := m.Due(t0, nil) // idle
	m.OnReply(pa, p[0].Nonce, t0.Add(time.Millisecond))
	m.Tick(t0.Add(time.Millisecond), nil)
	// 400ms later (idle probes every ~0.5s), the path turns active: its
	// detect time shrinks to 300ms (plus the jitter margin of its one 1ms
	// sample), counted from the activation plus one RTT (1ms): the first
	// active probe needs a round trip.
	at := t0.Add(400 * time.Millisecond)
	span := 300*time.Millisecond + DeadlineMargin(500*time.Microsecond, 300*time.Millisecond) + time.Millisecond
	m.SetActive(pa, true)
	if got := m.Due(at, nil); len(got) != 1 {
		t.Fatalf("activation must probe at once, got %+v", got)
	}
	if tr := m.Tick(at.Add(span-time.Millisecond), nil); len(tr) != 0 {
		t.Fatalf("down before a full active detect time: %+v", tr)
	}
	if tr := m.Tick(at.Add(span), nil); len(tr) != 1 || tr[0].Up {
		t.Fatalf("want down at activation + %v, got %+v", span, tr)
	}
}

// After an outage, the loss estimate describes the repaired path, not the
// outage: otherwise a path back up would look lossy for a whole window and
// the failback to it would wait ~14 s (found by the failover mesh test).
func TestMonitorOutageNotCountedAsLossAfterRepair(t *testing.T) {
	m := newTestMonitor(14)
	m.SetPath(pa, Settings{})
	cutFrom, cutTo := t0.Add(5*time.Second), t0.Add(15*time.Second)
	tr := drive(m, t0, t0.Add(20*time.Second), 10*time.Millisecond, func(p Probe, at time.Time) bool {
		return at.Before(cutFrom) || !at.Before(cutTo)
	})
	if len(tr) != 3 || !tr[2].Up {
		t.Fatalf("transitions %+v, want up, down, up", tr)
	}
	st, _ := m.Stats(pa)
	if st.Loss != 0 {
		t.Fatalf("loss %v 5s after the repair, want 0", st.Loss)
	}
	if st.ProbesLost < 15 {
		t.Fatalf("ProbesLost %d: the outage's probes must still be counted", st.ProbesLost)
	}
}

// Both math/rand generations drive a Monitor.
var (
	_ Rand = (*rand.Rand)(nil)
	_ Rand = (*randv1.Rand)(nil)
)
