package health

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestEstimatorConstantConverges(t *testing.T) {
	e := NewEstimator(0)
	for i := range 50 {
		e.OnSuccess(20*time.Millisecond, t0.Add(time.Duration(i)*time.Second))
	}
	if e.SRTT() != 20*time.Millisecond {
		t.Fatalf("SRTT = %v, want 20ms", e.SRTT())
	}
	// RTTVAR starts at R/2 = 10ms and decays by 3/4 per sample.
	if e.Jitter() > 10*time.Microsecond {
		t.Fatalf("Jitter = %v, want ~0", e.Jitter())
	}
	if e.Loss() != 0 || !e.LastSuccess().Equal(t0.Add(49*time.Second)) {
		t.Fatalf("Loss %v LastSuccess %v", e.Loss(), e.LastSuccess())
	}
}

func TestEstimatorFirstSample(t *testing.T) {
	e := NewEstimator(0)
	if e.HasRTT() || e.SRTT() != 0 || e.Loss() != 0 {
		t.Fatal("zero estimator not empty")
	}
	e.OnSuccess(40*time.Millisecond, t0)
	if e.SRTT() != 40*time.Millisecond || e.Jitter() != 20*time.Millisecond {
		t.Fatalf("first sample: SRTT %v RTTVAR %v, want 40ms 20ms (RFC 6298 2.2)", e.SRTT(), e.Jitter())
	}
	e.OnSuccess(48*time.Millisecond, t0)
	// RTTVAR = 3/4*20 + 1/4*|40-48| = 17; SRTT = 7/8*40 + 1/8*48 = 41.
	if e.SRTT() != 41*time.Millisecond || e.Jitter() != 17*time.Millisecond {
		t.Fatalf("second sample: SRTT %v RTTVAR %v, want 41ms 17ms", e.SRTT(), e.Jitter())
	}
}

func TestEstimatorStepTracked(t *testing.T) {
	e := NewEstimator(0)
	for range 40 {
		e.OnSuccess(10*time.Millisecond, t0)
	}
	// After the step, the error shrinks by 7/8 per sample: below 5% of the
	// 40 ms step after ceil(log(0.05)/log(7/8)) = 23 samples, plus the
	// medianSamples/2 first samples that enter clipped (at 2 x 10 + 1 ms)
	// until the median has moved: ~26.
	n := 0
	for e.SRTT() < 48*time.Millisecond {
		e.OnSuccess(50*time.Millisecond, t0)
		n++
		if n > 100 {
			t.Fatalf("SRTT stuck at %v", e.SRTT())
		}
	}
	if n < 24 || n > 27 {
		t.Fatalf("step tracked in %d samples, want ~26", n)
	}
}

func TestEstimatorJitterAlternating(t *testing.T) {
	e := NewEstimator(0)
	for i := range 200 {
		rtt := 10 * time.Millisecond
		if i%2 == 1 {
			rtt = 30 * time.Millisecond
		}
		e.OnSuccess(rtt, t0)
	}
	// Samples alternate +-10ms around 20ms: SRTT ~20ms, mean deviation ~10ms
	// (SRTT wobbles by 1/8 of the swing, which biases the deviation a bit).
	if d := e.SRTT() - 20*time.Millisecond; d < -2*time.Millisecond || d > 2*time.Millisecond {
		t.Fatalf("SRTT = %v, want ~20ms", e.SRTT())
	}
	if j := e.Jitter(); j < 9*time.Millisecond || j > 11*time.Millisecond {
		t.Fatalf("Jitter = %v, want ~10ms", j)
	}
}

func TestEstimatorLossWindowSlides(t *testing.T) {
	e := NewEstimator(4)
	steps := []struct {
		lost bool
		want float64
	}{
		{true, 1},        // L
		{false, 0.5},     // L .
		{false, 1.0 / 3}, // L . .
		{false, 0.25},    // L . . .
		{false, 0},       // . . . .  (the loss slid out)
		{true, 0.25},
		{true, 0.5},
	}
	for i, s := range steps {
		if s.lost {
			e.OnLoss()
		} else {
			e.OnSuccess(time.Millisecond, t0)
		}
		if got := e.Loss(); math.Abs(got-s.want) > 1e-9 {
			t.Fatalf("step %d: Loss = %v, want %v", i, got, s.want)
		}
	}
}

func TestEstimatorDefaultWindow32(t *testing.T) {
	e := NewEstimator(0)
	e.OnLoss()
	for range 31 {
		e.OnSuccess(time.Millisecond, t0)
	}
	if got := e.Loss(); got != 1.0/32 {
		t.Fatalf("Loss = %v, want 1/32", got)
	}
	e.OnSuccess(time.Millisecond, t0)
	if got := e.Loss(); got != 0 {
		t.Fatalf("after 32 more outcomes Loss = %v, want 0", got)
	}
}

func TestEstimatorResetLoss(t *testing.T) {
	e := NewEstimator(0)
	for range 10 {
		e.OnLoss()
	}
	e.OnSuccess(time.Millisecond, t0)
	e.ResetLoss()
	if e.Loss() != 0 || e.SRTT() != time.Millisecond {
		t.Fatalf("after ResetLoss: loss %v srtt %v, want 0 and the RTT kept", e.Loss(), e.SRTT())
	}
	e.OnLoss()
	e.OnSuccess(time.Millisecond, t0)
	if e.Loss() != 0.5 {
		t.Fatalf("loss %v, want 0.5 of the outcomes since the reset", e.Loss())
	}
}

// A relay starved now and then (a CPU limit's throttling, a busy node)
// reads a healthy 0.3 ms path at hundreds of milliseconds once in a while.
// Those samples are outliers: SRTT stays near the path's real RTT, while
// Jitter and LastRTT still show them. Unclipped, every 300 ms spike would
// add ~37 ms to SRTT (TestE2EFailover's standby path read 34 ms ± 65 ms on
// a latency-free link and never won back).
func TestEstimatorSpikesClipped(t *testing.T) {
	e := NewEstimator(0)
	for i := range 100 {
		rtt := 300 * time.Microsecond
		if i%4 == 3 {
			rtt = 300 * time.Millisecond
		}
		e.OnSuccess(rtt, t0)
		if i > 8 && e.SRTT() > 2*time.Millisecond {
			t.Fatalf("sample %d: SRTT %v after spikes in 1 of 4 samples of a 0.3 ms path, want under 2 ms", i, e.SRTT())
		}
	}
	if e.Clipped() != 25 {
		t.Fatalf("clipped %d samples, want the 25 spikes", e.Clipped())
	}
	if e.LastRTT() != 300*time.Millisecond {
		t.Fatalf("LastRTT = %v, want the raw 300ms sample", e.LastRTT())
	}
	if e.Jitter() < 10*time.Millisecond {
		t.Fatalf("Jitter = %v: the spikes must still show in the jitter", e.Jitter())
	}
}

// A lasting step up is clipped only for its first maxClipped samples:
// then the samples count in full (and soon the median has moved) and
// SRTT converges as before.
func TestEstimatorStepUpNotClippedForLong(t *testing.T) {
	e := NewEstimator(0)
	for range 40 {
		e.OnSuccess(10*time.Millisecond, t0)
	}
	for range medianSamples / 2 {
		e.OnSuccess(50*time.Millisecond, t0)
	}
	if got := e.Clipped(); got != maxClipped {
		t.Fatalf("clipped %d samples of the step, want %d (only isolated outliers are)", got, maxClipped)
	}
	for range 40 {
		e.OnSuccess(50*time.Millisecond, t0)
	}
	if got := e.Clipped(); got != maxClipped {
		t.Fatalf("clipped %d samples, want still %d: after the median moved none is an outlier", got, maxClipped)
	}
	if e.SRTT() < 49*time.Millisecond {
		t.Fatalf("SRTT = %v after 44 samples of 50ms, want ~50ms", e.SRTT())
	}
}

// A path's first answer sets SRTT (RFC 6298); read while the relay was
// starved, it would take ~30 samples to decay from 200 ms. SRTT is held
// below the bound of the recent samples, so it drops as soon as the
// median shows the path's real RTT.
func TestEstimatorFirstSampleOutlierDoesNotLinger(t *testing.T) {
	e := NewEstimator(0)
	e.OnSuccess(200*time.Millisecond, t0)
	for range 2 {
		e.OnSuccess(300*time.Microsecond, t0)
	}
	if want := clipFactor*300*time.Microsecond + clipFloor; e.SRTT() > want {
		t.Fatalf("SRTT = %v after a 200ms first answer and two of 0.3ms, want at most %v", e.SRTT(), want)
	}
}

// A path whose RTT is high in more than maxClipped of every medianSamples
// samples is congested now and then, not read by a starved relay once in
// a while: its high samples count in full, so it does not look fast.
func TestEstimatorFrequentSpikesCount(t *testing.T) {
	e := NewEstimator(0)
	var sum time.Duration
	for i := range 256 {
		rtt := 20 * time.Millisecond
		if i%8 < 3 { // 3 of every 8
			rtt = 200 * time.Millisecond
		}
		e.OnSuccess(rtt, t0)
		if i >= 192 {
			sum += e.SRTT()
		}
	}
	// The samples average 87.5 ms. Were all spikes clipped (at 2 x 20 + 1
	// = 41 ms), SRTT would average (3 x 41 + 5 x 20) / 8 = 27.9 ms; with
	// the third of each run counted in full, ~47.8 ms.
	if mean := sum / 64; mean < 40*time.Millisecond {
		t.Fatalf("SRTT averages %v for a 20 ms path at 200 ms in 3 of every 8 samples: the congestion is hidden", mean)
	}
}

// After an outage the window restarts (Monitor: forgetOutage): a path
// that comes back over a slower route is not judged against the old
// route's median.
func TestEstimatorRestartWindowTracksNewRoute(t *testing.T) {
	e := NewEstimator(0)
	for range 40 {
		e.OnSuccess(time.Millisecond, t0)
	}
	e.RestartWindow()
	for range 8 {
		e.OnSuccess(30*time.Millisecond, t0)
	}
	if e.Clipped() != 0 {
		t.Fatalf("clipped %d samples of the new route after the window restarted", e.Clipped())
	}
	// 1 ms -> 30 ms: after 8 samples of the EWMA, 30 - 29 x (7/8)^8 = 19.7 ms.
	if e.SRTT() < 19*time.Millisecond {
		t.Fatalf("SRTT = %v after 8 samples of 30 ms on the new route, want the EWMA's ~19.7 ms", e.SRTT())
	}
}
