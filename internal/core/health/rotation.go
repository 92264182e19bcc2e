package health

import (
	"slices"
	"time"
)

// Rotation is the staging state of our own key rotation (docs/protocol.md,
// "Key rotation"): from the moment a relay is given its next key it waits
// until every peer has proved that it accepts that key, or until the
// deadline passes, and then switches. A peer proves it by sending a probe
// request authenticated under the next key (only a peer that staged the
// key can). Rotation is pure: the shell feeds it the peers, the proofs and
// the time, and carries out the switch it decides.
type Rotation struct {
	since    time.Time
	deadline time.Duration
	staged   map[string]bool // peer name -> has proved the next key
}

// NewRotation starts a rotation staged at since, which switches at the
// latest deadline later.
func NewRotation(since time.Time, deadline time.Duration) *Rotation {
	return &Rotation{since: since, deadline: deadline, staged: map[string]bool{}}
}

// SetPeers makes names the peers the rotation waits for. A peer that stays
// keeps its proof; a new peer has none yet; a removed peer is no longer
// waited for.
func (r *Rotation) SetPeers(names []string) {
	next := make(map[string]bool, len(names))
	for _, n := range names {
		next[n] = r.staged[n]
	}
	r.staged = next
}

// Staged records that peer proved it accepts our next key. It reports
// whether this was news (the first proof since the peer was added).
func (r *Rotation) Staged(peer string) bool {
	was, ok := r.staged[peer]
	if !ok || was {
		return false
	}
	r.staged[peer] = true
	return true
}

// Since is when the rotation was staged; Deadline when it switches at the
// latest.
func (r *Rotation) Since() time.Time    { return r.since }
func (r *Rotation) Deadline() time.Time { return r.since.Add(r.deadline) }

// RotationDecision says whether to switch to the next key now and why.
type RotationDecision struct {
	Switch bool
	// Reason is "all-staged" or "deadline" when Switch is set.
	Reason string
	// Ready are the peers that proved the next key, Waiting those that
	// have not (the stragglers when the deadline forces the switch); both
	// sorted.
	Ready, Waiting []string
}

// Decide reports whether to switch at now: when every peer has staged the
// next key (also when there are no peers), or when the deadline has passed.
func (r *Rotation) Decide(now time.Time) RotationDecision {
	var d RotationDecision
	for n, ok := range r.staged {
		if ok {
			d.Ready = append(d.Ready, n)
		} else {
			d.Waiting = append(d.Waiting, n)
		}
	}
	slices.Sort(d.Ready)
	slices.Sort(d.Waiting)
	switch {
	case len(d.Waiting) == 0:
		d.Switch, d.Reason = true, "all-staged"
	case !now.Before(r.Deadline()):
		d.Switch, d.Reason = true, "deadline"
	}
	return d
}
