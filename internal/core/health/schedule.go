package health

import "time"

// scheduleJitter: each interval is drawn uniformly from [75%, 100%] of the
// nominal one, as BFD does (RFC 5880 6.8.7), so thousands of paths started
// together spread out instead of probing in bursts. Never above 100%, so
// the detect time still spans DetectMultiplier probes.
const scheduleJitterDiv = 4 // up to 1/4 of the interval is taken off

// probeGrid: every probe time is rounded down to a multiple of this grid
// (or of an eighth of the path's interval, if finer), so that the probes of
// many paths fall due at the same instants and the shell sends them in one
// wake instead of one wake each: with 1000 paths, at most 200 wakes per
// second for probes instead of one per probe. Rounding down only ever
// shortens an interval (to 70-100% of nominal at the default 100 ms), so
// the detect time still spans DetectMultiplier probes, and the schedule
// jitter above still spreads the probes of paths started together over
// the grid's slots.
const probeGrid = 5 * time.Millisecond

// asap is the wake time of work due at the next Due or Tick, whatever its
// now. It is not the zero time, so that NextDeadline's zero can mean "no
// paths".
var asap = time.Unix(0, 0)

// Probe is a request the shell must send now.
type Probe struct {
	ID    PathID
	Nonce uint64
	// Due is when the probe was due by the schedule (the time Due was
	// called, for a probe due at once): the shell's send time minus Due is
	// how late it went out.
	Due time.Time
}

// Transition is a change of a path's state. At is when it happened: for a
// down transition, the deadline that passed (which may be a little before the
// Tick that reports it).
type Transition struct {
	ID PathID
	Up bool
	At time.Time
}

// NextDeadline is the earliest instant at which Due or Tick has time-driven
// work; the shell sleeps until then (or until a datagram arrives). A time
// in the past means work is due at once (e.g. a path was just added). It is
// the zero time only when there are no paths: nothing to wait for.
// Transitions queued by OnReply are not time-driven: call Tick after
// OnReply.
func (m *Monitor) NextDeadline() time.Time {
	if len(m.heap) == 0 {
		return time.Time{}
	}
	return m.heap[0].wake
}

// Due returns, appended to out, the probes to send now, and records them as
// outstanding. Call it at or after NextDeadline.
func (m *Monitor) Due(now time.Time, out []Probe) []Probe {
	m.advance(now)
	out = append(out, m.probes...)
	clear(m.probes)
	m.probes = m.probes[:0]
	return out
}

// Tick returns, appended to out, the transitions since the last Tick: those
// found by OnReply and the detection deadlines that passed by now.
func (m *Monitor) Tick(now time.Time, out []Transition) []Transition {
	m.advance(now)
	out = append(out, m.trans...)
	clear(m.trans)
	m.trans = m.trans[:0]
	return out
}

func (m *Monitor) reschedule(p *path) {
	p.computeWake()
	m.heap.fix(p.heapIdx)
}

// advance does all time-driven work due at or before now.
func (m *Monitor) advance(now time.Time) {
	for len(m.heap) > 0 && !m.heap[0].wake.After(now) {
		p := m.heap[0]
		m.process(p, now)
		p.computeWake()
		m.heap.fix(0)
	}
}

func (m *Monitor) process(p *path, now time.Time) {
	if p.retime {
		p.retime = false
		p.det.Retime(now, p.span(), p.est.SRTT())
	}
	// Expire unanswered probes.
	for i := 0; i < p.nOut; {
		if p.out[i].expires.After(now) {
			i++
			continue
		}
		p.loseAt(i)
		m.touch(p)
	}
	if p.det.Check(now) {
		m.trans = append(m.trans, Transition{ID: p.id, Up: false, At: p.det.LastChange()})
		if p.peer.idle {
			// Its slow schedule ends: a down path is probed every
			// IdleInterval, so that it comes back up as fast as any.
			p.next = asap
		}
	}
	if !p.next.After(now) {
		m.send(p, now)
	}
}

func (m *Monitor) send(p *path, now time.Time) {
	if p.nOut == maxOutstanding {
		oldest := 0
		for i := 1; i < p.nOut; i++ {
			if p.out[i].sent.Before(p.out[oldest].sent) {
				oldest = i
			}
		}
		p.loseAt(oldest)
		m.touch(p)
	}
	p.peer.nonce++
	p.out[p.nOut] = pending{
		nonce:   p.peer.nonce,
		sent:    now,
		expires: now.Add(expiryDetects * p.detect()),
	}
	p.nOut++
	p.sent++
	due := p.next
	if due.Equal(asap) || due.After(now) {
		due = now
	}
	m.probes = append(m.probes, Probe{ID: p.id, Nonce: p.peer.nonce, Due: due})

	iv := p.interval()
	if j := uint64(iv / scheduleJitterDiv); j > 0 {
		// Modulo bias is below j/2^64: irrelevant for a schedule.
		iv -= time.Duration(m.rnd.Uint64() % (j + 1))
	}
	p.next = onGrid(now.Add(iv), p.interval())
}

// onGrid rounds t down to the probe grid (probeGrid, or an eighth of the
// interval iv if finer; slowGrid for intervals of slowGridFrom or more).
// The result is after t-iv/8, so never before the previous probe.
func onGrid(t time.Time, iv time.Duration) time.Time {
	g := min(probeGrid, iv/8)
	if iv >= slowGridFrom {
		g = slowGrid
	}
	if g <= 0 {
		return t
	}
	// Subtract the remainder rather than return t.Truncate(g): Truncate
	// drops the monotonic clock reading, and the schedule must not follow
	// wall clock steps.
	return t.Add(-t.Sub(t.Truncate(g)))
}
