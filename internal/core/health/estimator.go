package health

import (
	"math/bits"
	"time"
)

// DefaultLossWindow is how many recent probe outcomes the loss estimate
// covers. 32 probes is ~3 s on an active path at the default 100 ms interval:
// long enough that one lost probe reads as ~3% rather than 100%, short enough
// that a path that became lossy shows it within seconds.
const DefaultLossWindow = 32

// MaxLossWindow bounds the window: outcomes are kept in one uint64 bitmap.
const MaxLossWindow = 64

// Gains of the RTT estimators, as in RFC 6298 (TCP's RTO): alpha = 1/8 for
// the smoothed RTT and beta = 1/4 for the mean deviation. They smooth over
// roughly the last 8 samples: a single delayed probe moves SRTT by only
// 1/8 of the excess, while a lasting step is tracked within ~10 probes
// (~1 s on an active path).
const (
	alphaShift = 3 // alpha = 1/8
	betaShift  = 2 // beta = 1/4
)

// Outlier clipping of the smoothed RTT. A probe's RTT is measured by the
// relays themselves, so it includes their own scheduling delays: a relay
// throttled by its CPU limit (CFS quota, periods of 100 ms) or starved on
// a busy node reads a healthy path's RTT tens or hundreds of milliseconds
// high now and then. Fed to SRTT unchanged, one such sample of 300 ms on a
// 0.3 ms path adds 37 ms, which takes ~20 samples (10 s on a standby path)
// to decay, long enough to hold off a failback or force a false "better"
// switch. So an isolated outlier, a sample above clipFactor x the
// recent median + clipFloor while at most maxClipped-1 other samples of
// the window were clipped, enters SRTT at that bound (winsorized); it
// still counts in full in Jitter and LastRTT. The median is the upper
// median of the last medianSamples samples (before this one).
//
// Only isolated ones: the estimator cannot tell the relays' own delay
// from a path's queueing, and a path whose RTT is high in more than
// maxClipped of any medianSamples consecutive samples (intermittent
// congestion, a lasting step up) has its high samples count in full, so
// a bufferbloated path does not look fast. Samples below the median are
// never clipped: a path that got faster is tracked as before.
//
// While the window fills (the first medianSamples answers of a path, and
// again after each outage, when it restarts), SRTT itself is held at or
// below the bound too, so an outlier that came before the window could
// judge it (a path's first answer, read while the relay was starved)
// does not linger for ~20 samples.
const (
	medianSamples = 8
	clipFactor    = 2
	clipFloor     = time.Millisecond
	maxClipped    = 2
)

// Estimator tracks one path's round-trip time and loss from probe outcomes.
// It is a plain value type; the zero value has no samples and a window of
// DefaultLossWindow.
type Estimator struct {
	srtt, rttvar time.Duration
	last         time.Duration // the latest sample, unsmoothed
	hasRTT       bool
	clipped      uint64 // samples that entered SRTT clipped (outliers)

	// recent holds the last medianSamples samples: a ring whose next
	// slot is head, with nRecent slots written (until it is full, the
	// first nRecent). wasClipped marks the slots whose sample was clipped.
	recent     [medianSamples]time.Duration
	wasClipped [medianSamples]bool
	nRecent    int
	head       int

	window   int    // outcomes considered; 0 means DefaultLossWindow
	outcomes uint64 // bit i = 1 if the i-th most recent outcome was a loss
	count    int    // outcomes recorded, up to window
	lastOK   time.Time
}

// NewEstimator returns an Estimator whose loss window is the last window
// outcomes (clamped to 1..MaxLossWindow; 0 means DefaultLossWindow).
func NewEstimator(window int) Estimator {
	return Estimator{window: clampWindow(window)}
}

func clampWindow(w int) int {
	switch {
	case w <= 0:
		return DefaultLossWindow
	case w > MaxLossWindow:
		return MaxLossWindow
	}
	return w
}

// OnSuccess records an answered probe with round-trip time rtt, received at
// now.
func (e *Estimator) OnSuccess(rtt time.Duration, now time.Time) {
	if rtt < 0 {
		rtt = 0
	}
	e.last = rtt
	first := !e.hasRTT
	if first {
		// RFC 6298 (2.2): first sample.
		e.srtt, e.rttvar, e.hasRTT = rtt, rtt/2, true
	} else {
		// RFC 6298 (2.3): RTTVAR first, using the old SRTT.
		dev := e.srtt - rtt
		if dev < 0 {
			dev = -dev
		}
		e.rttvar += (dev - e.rttvar) >> betaShift
	}
	s, clip := rtt, false
	if e.nRecent > 0 && e.clippedInWindow() < maxClipped {
		if bound := clipFactor*e.median() + clipFloor; s > bound {
			s, clip = bound, true
			e.clipped++
		}
	}
	if !first {
		e.srtt += (s - e.srtt) >> alphaShift
	}
	e.remember(rtt, clip)
	if e.nRecent > 1 && e.nRecent < medianSamples {
		// The window is filling: SRTT is held under its bound (with two
		// samples in, the upper median is the larger, so this first acts
		// at the third).
		if bound := clipFactor*e.median() + clipFloor; e.srtt > bound {
			e.srtt = bound
		}
	}
	e.push(false)
	if now.After(e.lastOK) {
		e.lastOK = now
	}
}

// remember adds rtt to the recent samples.
func (e *Estimator) remember(rtt time.Duration, clipped bool) {
	e.recent[e.head], e.wasClipped[e.head] = rtt, clipped
	e.head = (e.head + 1) % medianSamples
	if e.nRecent < medianSamples {
		e.nRecent++
	}
}

// median is the upper median of the recent samples (zero if none).
func (e *Estimator) median() time.Duration {
	var s [medianSamples]time.Duration
	n := e.nRecent
	copy(s[:], e.recent[:n]) // before the ring is full, its first n slots
	for i := 1; i < n; i++ { // insertion sort: at most 8 elements
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if n == 0 {
		return 0
	}
	return s[n/2]
}

// clippedInWindow counts the clipped samples among the last
// medianSamples-1: with the next one, those are medianSamples
// consecutive samples (when the ring is full, the slot at head is the
// oldest, about to be overwritten).
func (e *Estimator) clippedInWindow() int {
	n := 0
	for i := range e.nRecent {
		if e.wasClipped[i] && !(e.nRecent == medianSamples && i == e.head) {
			n++
		}
	}
	return n
}

// RestartWindow forgets the recent samples that outliers are judged
// against, keeping SRTT: the Monitor calls it when a path comes back up,
// which may be over another route (the window then fills again, with
// SRTT held under its bound meanwhile).
func (e *Estimator) RestartWindow() {
	e.nRecent, e.head = 0, 0
	e.wasClipped = [medianSamples]bool{}
}

// Clipped counts the samples that entered SRTT clipped as outliers.
func (e *Estimator) Clipped() uint64 { return e.clipped }

// LastRTT is the latest sample, unsmoothed (the naive selector's input).
func (e *Estimator) LastRTT() time.Duration { return e.last }

// OnLoss records a probe that was never answered.
func (e *Estimator) OnLoss() { e.push(true) }

func (e *Estimator) push(lost bool) {
	w := clampWindow(e.window)
	e.outcomes <<= 1
	if lost {
		e.outcomes |= 1
	}
	if w < 64 {
		e.outcomes &= 1<<w - 1
	}
	if e.count < w {
		e.count++
	}
}

// ResetLoss forgets the recorded outcomes, keeping the RTT estimates. The
// Monitor calls it when a path comes back up (see forgetOutage).
func (e *Estimator) ResetLoss() {
	e.outcomes, e.count = 0, 0
}

// SRTT is the smoothed round-trip time; zero before the first answer.
func (e *Estimator) SRTT() time.Duration { return e.srtt }

// Jitter is the RTT mean deviation (RFC 6298's RTTVAR); zero before the
// first answer.
func (e *Estimator) Jitter() time.Duration { return e.rttvar }

// HasRTT reports whether any answer has been seen.
func (e *Estimator) HasRTT() bool { return e.hasRTT }

// Loss is the fraction of the recorded outcomes in the window that were
// losses, in [0, 1]; zero before any outcome.
func (e *Estimator) Loss() float64 {
	if e.count == 0 {
		return 0
	}
	return float64(bits.OnesCount64(e.outcomes)) / float64(e.count)
}

// LastSuccess is when the newest answer arrived; zero if none.
func (e *Estimator) LastSuccess() time.Time { return e.lastOK }
