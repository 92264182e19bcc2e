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

// Estimator tracks one path's round-trip time and loss from probe outcomes.
// It is a plain value type; the zero value has no samples and a window of
// DefaultLossWindow.
type Estimator struct {
	srtt, rttvar time.Duration
	last         time.Duration // the latest sample, unsmoothed
	hasRTT       bool

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
	if !e.hasRTT {
		// RFC 6298 (2.2): first sample.
		e.srtt, e.rttvar, e.hasRTT = rtt, rtt/2, true
	} else {
		// RFC 6298 (2.3): RTTVAR first, using the old SRTT.
		dev := e.srtt - rtt
		if dev < 0 {
			dev = -dev
		}
		e.rttvar += (dev - e.rttvar) >> betaShift
		e.srtt += (rtt - e.srtt) >> alphaShift
	}
	e.push(false)
	if now.After(e.lastOK) {
		e.lastOK = now
	}
}

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
