package health

import "time"

// Detector decides whether one path is up, the way BFD does: a path is down
// once no authenticated evidence has arrived for DetectMultiplier x the
// probe interval, and comes back up after UpThreshold consecutive answers.
//
// Evidence is a probe reply (OnAnswer) or passive evidence (OnPassive:
// authenticated WireGuard data that arrived over the path). Passive evidence
// keeps an up path up, which spares probes on busy paths from deciding
// alone; only probe answers count towards coming up, because probes arrive
// at a known rate and so "3 in a row" means the same thing on every path.
//
// Start-up: a path that has never been up comes up on its first answer. At
// start-up there is no flap history to guard against, and every extra probe
// interval is time during which the peer's pods are unreachable; a path that
// then proves unstable is held back by the failover package's dampening. After
// the first down, the full UpThreshold applies.
//
// The zero value is a down path that has never been up.
type Detector struct {
	up       bool
	everUp   bool
	streak   int           // consecutive answers while down
	lastAns  time.Time     // last answer, for the streak gap rule
	lastEv   time.Time     // last evidence of any kind
	deadline time.Time     // when up: down at this instant without new evidence
	changed  time.Time     // last transition
	floored  bool          // Defer raised the deadline to its floor since the last evidence
	credit   time.Duration // lateness Defer added since the last evidence
	// hold is the deadline Retime or Defer set: evidence never brings the
	// deadline before it (a path turned active keeps a full new detect
	// time, a stall's postponement stands), whatever its date.
	hold time.Time
}

// Up reports the current state.
func (d *Detector) Up() bool { return d.up }

// LastChange is the time of the last transition; zero if none yet.
func (d *Detector) LastChange() time.Time { return d.changed }

// Deadline is, for an up path, the instant it goes down without further
// evidence; zero for a down path.
func (d *Detector) Deadline() time.Time {
	if !d.up {
		return time.Time{}
	}
	return d.deadline
}

// OnAnswer records a probe answer at now; detect is DetectMultiplier x the
// path's current interval. It returns true if the path just came up.
func (d *Detector) OnAnswer(now time.Time, detect time.Duration, upThreshold int) bool {
	d.evidence(now, detect)
	if d.up {
		return false
	}
	if d.streak > 0 && now.Sub(d.lastAns) > detect {
		d.streak = 0 // the answers were not consecutive
	}
	d.streak++
	d.lastAns = now
	if d.streak >= max(upThreshold, 1) || !d.everUp {
		d.up, d.everUp, d.streak, d.changed = true, true, 0, now
		return true
	}
	return false
}

// OnPassive records passive evidence at now. It never brings a path up.
func (d *Detector) OnPassive(now time.Time, detect time.Duration) {
	d.evidence(now, detect)
}

// evidence records evidence at now. Evidence newer than any before sets the
// deadline to now + detect (the detect time the path has now: a jitter
// margin that shrank since the last evidence shrinks with it), but never
// before the hold that Retime or Defer set. Older evidence (passive
// evidence dated in the past) only ever extends it.
func (d *Detector) evidence(now time.Time, detect time.Duration) {
	if now.After(d.lastEv) {
		d.lastEv = now
		d.deadline = now.Add(detect)
		if d.deadline.Before(d.hold) {
			d.deadline = d.hold
		}
		d.floored, d.credit = false, 0
		return
	}
	if dl := d.lastEv.Add(detect); dl.After(d.deadline) {
		d.deadline = dl
	}
}

// Check reports whether the path went down at now: it was up and its
// deadline has passed (a deadline equal to now counts as passed).
func (d *Detector) Check(now time.Time) bool {
	if !d.up || now.Before(d.deadline) {
		return false
	}
	d.up, d.streak, d.changed = false, 0, d.deadline
	return true
}

// Retime adapts the deadline of an up path when its detect time changes
// (the path turned active or idle) at now; rtt is the path's smoothed
// round-trip time. Growing the detect time extends the deadline from the
// last evidence; shrinking it never sets a deadline before now + detect +
// rtt, so a path turned active is not declared down merely because its
// idle probes were sparse: the first probe at the new rate, sent at now,
// needs a round trip to be answered (a path whose RTT is longer than its
// active detect time, 100 ms against 60 ms at 20 ms probes, would go down
// at every failover to it otherwise).
func (d *Detector) Retime(now time.Time, detect, rtt time.Duration) {
	if !d.up {
		return
	}
	fromLast := d.lastEv.Add(detect)
	capNew := now.Add(detect + max(rtt, 0))
	if d.deadline.Before(capNew) {
		capNew = d.deadline
	}
	if fromLast.After(capNew) {
		d.deadline = fromLast
	} else {
		d.deadline = capNew
	}
	d.hold = d.deadline
}

// Defer moves the deadline of an up path later after the shell could not
// run (Monitor.Stalled): by late, the time it could not run, and, once
// between two pieces of evidence, to no earlier than floor. Only once:
// a relay late at every wake would otherwise push the deadline of a dead
// path to the floor again at every wake, and never declare it down. The
// lateness credited between two pieces of evidence is at most maxCredit
// (the path's detect time): whatever the shell reports, a dead path is
// declared down within two detect times and one floor of its last
// evidence. It never brings a deadline forward and does nothing for a
// down path.
func (d *Detector) Defer(late time.Duration, floor time.Time, maxCredit time.Duration) {
	if !d.up {
		return
	}
	late = min(late, max(maxCredit-d.credit, 0))
	d.credit += late
	d.deadline = d.deadline.Add(late)
	if !d.floored && d.deadline.Before(floor) {
		d.deadline, d.floored = floor, true
	}
	d.hold = d.deadline
}
