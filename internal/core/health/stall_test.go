package health

import (
	"math/rand/v2"
	"testing"
	"time"
)

// stallSim drives one active path of a Monitor with fake time the way the
// agent's owner loop does, on a relay that is starved now and then: the loop
// means to wake at NextDeadline but wakes late (lateness drawn by late).
// Answers that arrived before the loop meant to wake were read and dated
// on time by the receive goroutines; answers that arrived while the relay
// could not run are read only after it runs again, after the wake's Tick
// (the worst order). alive says whether the path delivers a probe sent at
// a given time; an answer takes rtt(i) for the i-th probe, never
// overtaking the one before (the testbed's emulator never reorders).
type stallSim struct {
	m       *Monitor
	now     time.Time
	stalled bool // report lateness to the monitor (Stalled)
	late    func() time.Duration
	alive   func(sent time.Time) bool
	rtt     func() time.Duration

	inflight []simAnswer
	trans    []Transition
	sent     int
}

type simAnswer struct {
	nonce uint64
	at    time.Time
}

func (s *stallSim) deliver(upTo, dated time.Time, datedNow bool) {
	n := 0
	for _, a := range s.inflight {
		if a.at.After(upTo) {
			s.inflight[n] = a
			n++
			continue
		}
		at := a.at
		if datedNow {
			at = dated
		}
		s.m.OnReply(pa, a.nonce, at)
	}
	s.inflight = s.inflight[:n]
}

func (s *stallSim) run(until time.Time) {
	var probes []Probe
	for s.now.Before(until) {
		planned := s.m.NextDeadline()
		if planned.Before(s.now) {
			planned = s.now
		}
		planned = minTime(planned, s.now.Add(100*time.Millisecond)) // the agent's maxTimer
		late := s.late()
		wake := planned.Add(late)
		// Read by the receive goroutines before the stall began: on time.
		s.deliver(planned, time.Time{}, false)
		s.now = wake
		if s.stalled && late >= time.Millisecond {
			s.m.Stalled(late, wake)
		}
		probes = s.m.Due(wake, probes[:0])
		for _, p := range probes {
			s.sent++
			if !s.alive(wake) {
				continue
			}
			at := wake.Add(s.rtt())
			if n := len(s.inflight); n > 0 && at.Before(s.inflight[n-1].at) {
				at = s.inflight[n-1].at // no reordering
			}
			s.inflight = append(s.inflight, simAnswer{nonce: p.Nonce, at: at})
		}
		s.trans = s.m.Tick(wake, s.trans)
		// Arrived while the relay could not run: read just after the Tick.
		s.now = wake.Add(time.Microsecond)
		s.deliver(wake, s.now, true)
		s.trans = s.m.Tick(s.now, s.trans)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (s *stallSim) downs() []Transition {
	var d []Transition
	for _, t := range s.trans {
		if !t.Up {
			d = append(d, t)
		}
	}
	return d
}

// aggressive are the fastest timers the perf gate runs: 20 ms probes, down after 60 ms.
var aggressive = Settings{Interval: 20 * time.Millisecond, IdleInterval: 100 * time.Millisecond}

func newStallSim(seed uint64, stalled bool) *stallSim {
	rnd := rand.New(rand.NewPCG(seed, 2))
	m := newTestMonitor(seed)
	m.SetPath(pa, aggressive)
	m.SetActive(pa, true)
	return &stallSim{
		m: m, now: t0, stalled: stalled,
		// One wake in five is late by up to 100 ms: a relay sharing its
		// CPUs with a load that takes most of them.
		late: func() time.Duration {
			if rnd.IntN(5) != 0 {
				return time.Duration(rnd.IntN(300)) * time.Microsecond
			}
			return time.Duration(rnd.IntN(100)) * time.Millisecond
		},
		alive: func(time.Time) bool { return true },
		rtt:   func() time.Duration { return 20*time.Millisecond + time.Duration(rnd.IntN(500))*time.Microsecond },
	}
}

// A starved relay does not declare a healthy path down: over a simulated
// minute of wakes up to 100 ms late, the path that answers every probe in
// 20 ms stays up. The same run without Stalled (the relay's lateness taken
// for the path's silence) does declare it down, so the scenario is one
// that needs the discount.
func TestStalledRelayKeepsHealthyPathUp(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		s := newStallSim(seed, true)
		s.run(t0.Add(time.Minute))
		if d := s.downs(); len(d) != 0 {
			t.Errorf("seed %d: healthy path declared down %d times, first at %v", seed, len(d), d[0].At.Sub(t0))
		}
		blind := newStallSim(seed, false)
		blind.run(t0.Add(time.Minute))
		if len(blind.downs()) == 0 {
			t.Errorf("seed %d: without Stalled the starved relay kept the path up too: the scenario tests nothing", seed)
		}
	}
}

// A dead path is still detected by a starved relay: cut at 30 s, it goes
// down, never before the detect time after its last answer, and within
// the detect time, its jitter margin, an RTT and the stalls reported
// since (each stall postpones the deadline by itself and at most one
// RTO).
func TestStalledRelayStillDetectsDeadPath(t *testing.T) {
	cut := t0.Add(30 * time.Second)
	for seed := uint64(1); seed <= 5; seed++ {
		s := newStallSim(seed, true)
		s.alive = func(sent time.Time) bool { return sent.Before(cut) }
		var stalls time.Duration
		late := s.late
		s.late = func() time.Duration {
			d := late()
			if s.now.After(cut) && d >= time.Millisecond {
				stalls += d + 21*time.Millisecond + DeadlineMargin(20*time.Millisecond, 60*time.Millisecond) // the stall and at most one RTO
			}
			return d
		}
		s.run(cut.Add(5 * time.Second))
		d := s.downs()
		if len(d) != 1 {
			t.Fatalf("seed %d: downs %+v, want exactly one, after the cut", seed, d)
		}
		st, _ := s.m.Stats(pa)
		if took := d[0].At.Sub(st.LastSuccess); took < 60*time.Millisecond {
			t.Errorf("seed %d: down %v after the last answer, before the 60ms detect time", seed, took)
		}
		bound := 60*time.Millisecond + DeadlineMargin(st.Jitter, 60*time.Millisecond) + 21*time.Millisecond + stalls
		if took := d[0].At.Sub(cut); took > bound {
			t.Errorf("seed %d: down %v after the cut, bound %v", seed, took, bound)
		}
	}
}

// The jitter margin: a path whose answers take 10 to 70 ms (the flapping
// scenario's 20 ms ± 15 ms each way) leaves gaps longer than 60 ms between
// answers at 20 ms probes. It stays up over a simulated minute, and once
// cut it is down within the detect time plus at most half of it plus an
// RTT.
func TestJitterMarginKeepsJitteryPathUp(t *testing.T) {
	cut := t0.Add(time.Minute)
	for seed := uint64(1); seed <= 5; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 3))
		s := newStallSim(seed, true)
		s.late = func() time.Duration { return 0 }
		s.rtt = func() time.Duration {
			return time.Duration(5+rnd.IntN(31))*time.Millisecond + time.Duration(5+rnd.IntN(31))*time.Millisecond
		}
		s.alive = func(sent time.Time) bool { return sent.Before(cut) }
		s.run(cut.Add(2 * time.Second))
		d := s.downs()
		if len(d) != 1 || d[0].At.Before(cut) {
			t.Fatalf("seed %d: downs %+v, want one, after the cut at 60s", seed, d)
		}
		if took, bound := d[0].At.Sub(cut), 60*time.Millisecond+30*time.Millisecond+70*time.Millisecond; took > bound {
			t.Errorf("seed %d: cut detected after %v, bound %v", seed, took, bound)
		}
	}
}

func TestDeadlineMargin(t *testing.T) {
	for _, c := range []struct{ jitter, detect, want time.Duration }{
		{0, 60 * time.Millisecond, 0},
		{500 * time.Microsecond, 60 * time.Millisecond, 2 * time.Millisecond},
		{5 * time.Millisecond, 60 * time.Millisecond, 20 * time.Millisecond},
		{10 * time.Millisecond, 60 * time.Millisecond, 30 * time.Millisecond}, // capped at half the detect time
		{-time.Millisecond, 60 * time.Millisecond, 0},
	} {
		if got := DeadlineMargin(c.jitter, c.detect); got != c.want {
			t.Errorf("DeadlineMargin(%v, %v) = %v, want %v", c.jitter, c.detect, got, c.want)
		}
	}
}

// Stalled leaves down paths down, and ignores stalls shorter than a
// quarter of a path's interval.
func TestStalledScope(t *testing.T) {
	m := newTestMonitor(7)
	m.SetPath(pa, aggressive)
	m.SetActive(pa, true)
	p := m.Due(t0, nil)
	m.OnReply(pa, p[0].Nonce, t0.Add(time.Millisecond))
	m.Tick(t0.Add(time.Millisecond), nil)
	st, _ := m.Stats(pa)
	want := t0.Add(time.Millisecond + 60*time.Millisecond + DeadlineMargin(st.Jitter, 60*time.Millisecond))
	m.Stalled(4*time.Millisecond, t0.Add(10*time.Millisecond)) // under 20ms / 4: ignored
	if got := m.paths[pa].det.Deadline(); !got.Equal(want) {
		t.Fatalf("deadline %v after a 4ms stall, want %v (unchanged)", got.Sub(t0), want.Sub(t0))
	}
	m.Stalled(10*time.Millisecond, t0.Add(20*time.Millisecond))
	if got := m.paths[pa].det.Deadline(); !got.Equal(want.Add(10 * time.Millisecond)) {
		t.Fatalf("deadline %v after a 10ms stall, want %v", got.Sub(t0), want.Add(10*time.Millisecond).Sub(t0))
	}
	// Down stays down: no answers for a second.
	for at := t0.Add(30 * time.Millisecond); at.Before(t0.Add(time.Second)); at = at.Add(5 * time.Millisecond) {
		m.Due(at, nil)
		m.Tick(at, nil)
	}
	m.Stalled(50*time.Millisecond, t0.Add(time.Second))
	if st, _ := m.Stats(pa); st.State != Down {
		t.Fatalf("state %v after a stall, want down", st.State)
	}
}

// A relay that is late at every wake still detects a dead path: the floor
// of one RTO after a stall applies once between two pieces of evidence,
// not at every stall (or a dead path's deadline would move to the floor
// again at each late wake, for ever), and each stall postpones the
// deadline only by itself, so the time the relay does run adds up to the
// detect time.
func TestLateAtEveryWakeStillDetectsDeadPath(t *testing.T) {
	cut := t0.Add(10 * time.Second)
	for _, late := range []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 200 * time.Millisecond} {
		s := newStallSim(1, true)
		s.late = func() time.Duration { return late }
		s.alive = func(sent time.Time) bool { return sent.Before(cut) }
		s.run(cut.Add(time.Minute))
		if d := s.downs(); len(d) != 1 || d[0].At.Before(cut) {
			t.Errorf("late %v at every wake: downs %+v, want one after the cut", late, d)
		}
	}
}

// Passive evidence dated before an activation (the agent dates the Bind's
// counts at the previous housekeeping round) but newer than the path's
// last answer does not bring its deadline before a full new detect time
// after the activation: the standby path a failover moves to is not
// declared down at once because its idle answers were sparse. Nor does it
// undo a stall's postponement.
func TestOldPassiveEvidenceKeepsHolds(t *testing.T) {
	m := newTestMonitor(9)
	m.SetPath(pa, aggressive) // standby: probed every 100ms, down after 300ms
	p := m.Due(t0, nil)
	m.OnReply(pa, p[0].Nonce, t0.Add(time.Millisecond))
	m.Tick(t0.Add(time.Millisecond), nil)
	act := t0.Add(100 * time.Millisecond)
	m.SetActive(pa, true)
	m.Due(act, nil)
	m.OnPassive(pa, act.Add(-90*time.Millisecond)) // dated at the previous round
	if tr := m.Tick(act.Add(59*time.Millisecond), nil); len(tr) != 0 {
		t.Fatalf("down %v after the activation, before a full 60ms detect time: %+v", 59*time.Millisecond, tr)
	}
	m.Stalled(40*time.Millisecond, act.Add(59*time.Millisecond))
	m.OnPassive(pa, act.Add(-80*time.Millisecond))
	if tr := m.Tick(act.Add(95*time.Millisecond), nil); len(tr) != 0 {
		t.Fatalf("old passive evidence undid a stall's postponement: %+v", tr)
	}
}

// A path whose RTT is longer than its active detect time (the consumer
// path's 100 ms at 20 ms probes: 60 ms) is not declared down when it turns
// active: the first probe at the active rate is answered a round trip
// after the activation, and the deadline waits for it.
func TestActivationWaitsForOneRoundTrip(t *testing.T) {
	m := newTestMonitor(11)
	m.SetPath(pa, aggressive) // standby: probed every 100ms
	var tr []Transition
	const rtt = 100 * time.Millisecond
	type ans struct {
		nonce uint64
		at    time.Time
	}
	var inflight []ans
	for at := t0; at.Before(t0.Add(3 * time.Second)); at = at.Add(time.Millisecond) {
		if at.Equal(t0.Add(2*time.Second + 50*time.Millisecond)) {
			m.SetActive(pa, true)
		}
		for len(inflight) > 0 && !inflight[0].at.After(at) {
			m.OnReply(pa, inflight[0].nonce, at)
			inflight = inflight[1:]
		}
		for _, p := range m.Due(at, nil) {
			inflight = append(inflight, ans{p.Nonce, at.Add(rtt)})
		}
		tr = m.Tick(at, tr)
	}
	for _, x := range tr {
		if !x.Up {
			t.Fatalf("a 100ms path went down at %v (activated at 2.05s): %+v", x.At.Sub(t0), tr)
		}
	}
}

// TestStallCreditIsBounded: a shell that reports a stall at every wake,
// each longer than the time that really passed (a loop that counts its
// own work as lateness, or a clock that jumps), cannot keep a dead path up:
// at most one detect time of stalls is credited between two pieces of
// evidence, so the path is down within two detect times plus one RTO of
// its last answer.
func TestStallCreditIsBounded(t *testing.T) {
	m := NewMonitor(rand.New(rand.NewPCG(3, 3)))
	id := PathID{Peer: "b", Path: 0}
	s := Settings{Interval: 20 * time.Millisecond}
	m.SetPath(id, s)
	m.SetActive(id, true)
	t0 := time.Unix(1_000_000, 0)
	p := m.Due(t0, nil)
	m.OnReply(id, p[0].Nonce, t0.Add(time.Millisecond))
	m.Tick(t0.Add(time.Millisecond), nil)
	last := t0.Add(time.Millisecond)

	detect := 3 * s.Interval // DefaultDetectMultiplier
	limit := last.Add(2*detect + 20*time.Millisecond)
	for now := last; now.Before(last.Add(10 * detect)); now = now.Add(5 * time.Millisecond) {
		m.Stalled(30*time.Millisecond, now) // more than the 5 ms that passed
		m.Due(now, nil)
		for _, tr := range m.Tick(now, nil) {
			if tr.ID == id && !tr.Up {
				if now.After(limit) {
					t.Fatalf("the dead path went down %v after its last answer, want within %v", now.Sub(last), limit.Sub(last))
				}
				return
			}
		}
	}
	t.Fatalf("a shell reporting stalls at every wake kept a dead path up for %v", 10*detect)
}
