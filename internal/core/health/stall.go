package health

import "time"

// Aggressive timers (an interval of 10-20 ms, so a detect time of 30-60 ms)
// leave little room for anything but a dead path, and two things other
// than a dead path can eat that room: the path's own delay variation, and
// the relay itself not running in time. Both are discounted here, so that
// what stays is evidence against the path.
//
// Delay variation. Request/response probing sees the path's jitter twice
// in the gap between two answers: an answer that took 10 ms followed by one
// that took 70 ms leaves a gap of one interval plus 60 ms. A path is down
// after its detect time plus a margin of jitterMarginMult x the path's RTT
// mean deviation (the estimator's Jitter, RFC 6298's RTTVAR), as TCP's RTO
// allows SRTT + 4 x RTTVAR for an answer; the margin is capped at half the
// detect time, so a path whose jitter is huge is still detected within 1.5
// detect times. On a clean path (jitter well under a millisecond) the
// margin is a few ms.
//
// The relay's own lateness. Software BFD breaks under CPU starvation: the
// owner loop that sends probes and checks deadlines wakes late, probes go
// out late, answers sit unread, and a healthy path misses its deadline for
// the relay's delay, not the path's. The shell measures how late it woke
// against the deadline it slept for and reports it (Stalled); time the
// relay could not run does not count as silence of the path: every up
// path's deadline moves later by the lateness, and to no earlier than one
// RTO (SRTT plus the jitter margin) after the wake, so that after a stall
// a path gets one round trip of running time, in which the probe sent at
// the wake can be answered, before it is judged (that floor once between
// two pieces of evidence: Detector.Defer). A dead path is still detected:
// each stall postpones its deadline by the stall (plus one RTO, once), at
// most one detect time of stalls in all between two pieces of evidence,
// and time the relay does run counts in full.

// jitterMarginMult: the deadline allows this many mean deviations of the
// RTT on top of the detect time (RFC 6298's K = 4 for TCP's RTO).
const jitterMarginMult = 4

// jitterMarginCapDiv: the jitter margin is at most detect / this.
const jitterMarginCapDiv = 2

// stallTolerance: a stall shorter than interval / stallTolerance is
// ignored for a path. The schedule already varies intervals by a quarter
// (scheduleJitterDiv), and one probe late by less than a quarter interval
// leaves DetectMultiplier - 1 intervals of the detect time untouched; below
// it, the per-path work of Stalled is not worth doing.
const stallTolerance = 4

// DeadlineMargin is the time a path may go without evidence beyond its
// detect time detect, for a path whose RTT mean deviation is jitter:
// jitterMarginMult x jitter, at most detect / jitterMarginCapDiv.
func DeadlineMargin(jitter, detect time.Duration) time.Duration {
	return min(jitterMarginMult*max(jitter, 0), detect/jitterMarginCapDiv)
}

// Stalled tells the monitor that the shell woke (or ran) late time later
// than it meant to, at now: the relay could not send probes or read
// answers meanwhile. For every path whose interval is at most
// stallTolerance x late, its unanswered probes expire late later and, if it
// is up, its deadline moves later by late and to no earlier than now +
// SRTT + the jitter margin (that floor once between two pieces of
// evidence). A down path stays down (only answers bring it up). It costs
// one pass over the paths: the shell reports stalls of at least a
// millisecond, not every wake.
func (m *Monitor) Stalled(late time.Duration, now time.Time) {
	if late <= 0 {
		return
	}
	for _, p := range m.paths {
		if late < p.interval()/stallTolerance {
			continue
		}
		for i := range p.nOut {
			p.out[i].expires = p.out[i].expires.Add(late)
		}
		if p.det.Up() {
			d := p.detect()
			p.det.Defer(late, now.Add(p.est.SRTT()+DeadlineMargin(p.est.Jitter(), d)), d)
		}
		m.reschedule(p)
	}
}
