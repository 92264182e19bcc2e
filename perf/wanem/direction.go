package wanem

import (
	"math/rand/v2"
	"time"
)

// Verdict is what a Direction decided for one frame.
type Verdict uint8

// Verdicts. Pass means the frame is due at the returned time; the others
// say why it was dropped.
const (
	Pass Verdict = iota
	DropCut
	DropLoss  // random loss
	DropBurst // Gilbert-Elliott loss
	DropQueue // the rate limiter's backlog is full
	numVerdicts
)

var verdictNames = [numVerdicts]string{"pass", "cut", "loss", "burst", "queue"}

func (v Verdict) String() string {
	if v < numVerdicts {
		return verdictNames[v]
	}
	return "invalid"
}

// Counts are a Direction's per-verdict frame and byte counters.
type Counts struct {
	Frames [numVerdicts]uint64
	Bytes  [numVerdicts]uint64
}

// Direction is one direction of an emulated link. It is not safe for
// concurrent use.
type Direction struct {
	s       Settings
	rng     *rand.Rand
	ge      geState
	tb      bucket
	lastDue time.Time
	counts  Counts
}

// NewDirection returns a perfect wire drawing its randomness from rng.
func NewDirection(rng *rand.Rand) *Direction {
	return &Direction{rng: rng}
}

// Set replaces the settings at now. The limiter's tokens, the loss
// channel's state and the FIFO order carry over, so a change never
// reorders frames already admitted. s must be valid (Settings.Validate).
func (d *Direction) Set(s Settings, now time.Time) {
	d.s = s
	d.tb.setRate(s.Rate, now)
	if s.Burst == nil {
		d.ge = geState{}
	}
}

// Settings returns the current settings.
func (d *Direction) Settings() Settings { return d.s }

// Counts returns the counters.
func (d *Direction) Counts() Counts { return d.counts }

// Admit decides the fate of a frame of size bytes arriving at now: Pass
// and the time it is due at the far end, or the reason it is dropped.
// Due times never decrease. With no loss, burst or jitter configured it
// draws no random numbers.
func (d *Direction) Admit(now time.Time, size int) (time.Time, Verdict) {
	v, due := d.admit(now, size)
	d.counts.Frames[v]++
	d.counts.Bytes[v] += uint64(size)
	return due, v
}

func (d *Direction) admit(now time.Time, size int) (Verdict, time.Time) {
	s := &d.s
	if s.Cut {
		return DropCut, time.Time{}
	}
	if s.Loss > 0 && d.rng.Float64() < s.Loss {
		return DropLoss, time.Time{}
	}
	if s.Burst != nil && d.ge.lose(s.Burst, d.rng) {
		return DropBurst, time.Time{}
	}
	backlog := time.Duration(s.Backlog)
	if backlog == 0 {
		backlog = DefaultBacklog
	}
	wait, ok := d.tb.take(now, size, backlog)
	if !ok {
		return DropQueue, time.Time{}
	}
	delay := time.Duration(s.Delay)
	if j := int64(s.Jitter); j > 0 {
		delay += time.Duration(d.rng.Int64N(2*j+1) - j)
		delay = max(delay, 0)
	}
	due := now.Add(wait + delay)
	if due.Before(d.lastDue) {
		due = d.lastDue
	}
	d.lastDue = due
	return Pass, due
}
