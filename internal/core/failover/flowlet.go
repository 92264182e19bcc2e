package failover

import "time"

// Moving a peer's traffic to a path that delivers sooner reorders it:
// packets sent on the new path overtake those still in flight on the old
// one, by the difference of the two one-way delays. A TCP receiver sees a
// hole, its SACKs make the sender retransmit what was only late, and the
// sender halves its window (the goodput dip after a restore,
// docs/failover.md "Moving to a faster path"). The mover therefore waits
// for a flowlet boundary: a gap in the peer's outgoing traffic at least as
// long as the delay difference, after which nothing of the peer's is still
// in flight on the old path that the new one could overtake. Until then
// the peer's packets keep going over the old paths, which are healthy (a
// move away from a failed path never waits: what is in flight there is
// lost anyway). A bulk flow may never pause that long; after FlowletHold
// the mover makes the gap itself, by holding the first packet for the new
// path until the gap has passed. No packet is ever held longer than
// MaxReorderGap.

// FlowletHold is how long a move to a faster path waits for a natural gap
// in the peer's traffic. Interactive and request/response traffic pauses
// for tens of ms many times a second, so it moves within a few ms without
// holding any packet; half a second keeps a healthier path from being used
// late by much, against the 2 s and 3 s the selector already waited
// (betterHold, failbackHold).
const FlowletHold = 500 * time.Millisecond

// MaxReorderGap bounds the gap a move makes itself, so the longest any
// packet is held. One-way delay differences between the paths of one peer
// (a direct WAN path against a detour through the consumer cluster) are
// tens of ms; beyond 100 ms a held packet costs an interactive flow more
// than the reordering would, and the move reorders instead.
const MaxReorderGap = 100 * time.Millisecond

// ReorderMargin is added to the estimated one-way delay difference: the
// paths' delays vary by a few ms from packet to packet (queues, the
// relays' scheduling) and a gap of exactly the mean difference would still
// let some packets overtake.
const ReorderMargin = 2 * time.Millisecond

// ReorderGap is the gap in a peer's traffic after which a move from a path
// of round-trip time oldSRTT to one of newSRTT reorders nothing: half the
// RTT difference (the one-way difference, the paths being taken as
// symmetric) plus the larger of ReorderMargin and the old path's jitter.
// It is 0 when the new path is not faster (nothing can overtake) and at
// most MaxReorderGap.
func ReorderGap(oldSRTT, newSRTT, oldJitter time.Duration) time.Duration {
	if newSRTT >= oldSRTT {
		return 0
	}
	return min((oldSRTT-newSRTT)/2+max(ReorderMargin, oldJitter), MaxReorderGap)
}

// Flowlet is a move of a peer's traffic waiting for a flowlet boundary.
// The sender (the Bind) asks Step before each send.
type Flowlet struct {
	// Gap is the pause in the peer's traffic that makes the move safe,
	// at most MaxReorderGap.
	Gap time.Duration
	// Deadline is when the move stops waiting for a natural gap and makes
	// one.
	Deadline time.Time
}

// NewFlowlet is a move decided at now that needs a gap of gap (capped at
// MaxReorderGap) and waits at most hold for it.
func NewFlowlet(now time.Time, gap, hold time.Duration) Flowlet {
	return Flowlet{Gap: min(max(gap, 0), MaxReorderGap), Deadline: now.Add(max(hold, 0))}
}

// Step decides, for a send at now whose previous send to the peer was at
// lastSend (zero: never), whether it goes over the new paths (move) and
// how long it must be held first. It moves at once, holding nothing, when
// the traffic has paused for Gap (a flowlet boundary); at or after the
// Deadline it moves and holds the packet until lastSend + Gap; before it,
// it does not move and the packet goes over the old paths. wait is never
// above Gap, so never above MaxReorderGap, and a moved packet is never
// sent before lastSend + Gap.
func (f Flowlet) Step(now, lastSend time.Time) (move bool, wait time.Duration) {
	if lastSend.IsZero() {
		return true, 0
	}
	since := now.Sub(lastSend)
	if since >= f.Gap {
		return true, 0
	}
	if now.Before(f.Deadline) {
		return false, 0
	}
	return true, f.Gap - max(since, 0)
}
