package config

import (
	"fmt"
	"math"
	"time"
)

// Health configures probing and path selection for a peer.
type Health struct {
	// Interval is the probe interval of the active path.
	Interval time.Duration
	// IdleInterval is the probe interval of the other paths.
	IdleInterval time.Duration
	// DetectMultiplier: a path is down after this many intervals without
	// an answer.
	DetectMultiplier int
	// UpThreshold: a down path is up again after this many consecutive
	// answers.
	UpThreshold int
	// A challenger path replaces the active one only if its cost is lower
	// by more than BetterMargin and by more than BetterMarginRatio of the
	// active path's cost, continuously for BetterHold.
	BetterMargin      time.Duration
	BetterMarginRatio float64
	BetterHold        time.Duration
	// FailbackHold: a recovered path must stay up this long before
	// traffic fails back to it.
	FailbackHold time.Duration
	// LossPenalty is the cost added per 100% loss:
	// cost = srtt + bias + LossPenalty*loss.
	LossPenalty time.Duration
	// Selector is SelectorLowestCost or SelectorNaive.
	Selector  string
	Dampening Dampening
}

// Dampening configures RFC 2439 style flap dampening of paths: each flap
// adds Penalty, which decays with HalfLife; above Suppress the path is not
// eligible for selection until the penalty decays below Reuse.
type Dampening struct {
	Enabled  bool
	Penalty  float64
	HalfLife time.Duration
	Suppress float64
	Reuse    float64
}

// Health defaults. They follow BFD's usual fast profile (RFC 5880/7419:
// 50 ms x 3) in spirit, one step slower because probes ride userspace UDP
// on shared nodes; Liqo's own gateway notices a dead link only after about
// 10 s, which is what the relay is there to beat.
const (
	// DefaultInterval of 100 ms with DetectMultiplier 3 detects a dead
	// active path in 300 ms, and costs 10 small packets per second.
	DefaultInterval = 100 * time.Millisecond
	// DefaultIdleInterval keeps standby paths measured (RTT and loss)
	// at a fifth of the active rate, so a failover lands on a path whose
	// state is at most 1.5 s old.
	DefaultIdleInterval = 500 * time.Millisecond
	// DefaultDetectMultiplier is BFD's usual 3: one or two lost probes
	// are common and must not cause a failover.
	DefaultDetectMultiplier = 3
	// DefaultUpThreshold: three answers in a row before a path counts as
	// up again, so that a single lucky probe does not bring it back.
	DefaultUpThreshold = 3
	// DefaultBetterMargin ignores RTT differences within scheduling and
	// measurement noise on a busy node.
	DefaultBetterMargin = 2 * time.Millisecond
	// DefaultBetterMarginRatio: on long paths, jitter grows with the RTT,
	// so the challenger must also be 10% better.
	DefaultBetterMarginRatio = 0.10
	// DefaultBetterHold: the improvement must last 2 s (20 active probes)
	// so that a momentary dip of the active path does not move traffic.
	DefaultBetterHold = 2 * time.Second
	// DefaultFailbackHold: a path that just came back must prove itself
	// for 3 s before we move traffic back to it.
	DefaultFailbackHold = 3 * time.Second
	// DefaultLossPenalty: 10% loss costs like 20 ms of extra RTT, which
	// is roughly what TCP loses to retransmissions at that rate.
	DefaultLossPenalty = 200 * time.Millisecond
	DefaultSelector    = SelectorLowestCost
	// Dampening defaults are RFC 2439's penalty and limits with the
	// half-life scaled from BGP's minutes to our sub-second detection: a
	// path is suppressed on its 4th failure in quick succession (or its
	// 6th at one every 5 s), and usable again some 18 s after its last
	// failure (3500 -> 1500 at a 15 s half-life). pkg/failover and
	// docs/failover.md have the full arithmetic.
	DefaultDampeningPenalty  = 1000
	DefaultDampeningHalfLife = 15 * time.Second
	DefaultDampeningSuppress = 3500
	DefaultDampeningReuse    = 1500
)

// Limits of the health settings.
const (
	// MinInterval: below 10 ms, timer and scheduling noise in userspace
	// dominates the measurement and probes become a load.
	MinInterval         = 10 * time.Millisecond
	MaxDetectMultiplier = 255 // as in BFD
)

// DefaultHealth returns the default health settings.
func DefaultHealth() Health {
	return Health{
		Interval:          DefaultInterval,
		IdleInterval:      DefaultIdleInterval,
		DetectMultiplier:  DefaultDetectMultiplier,
		UpThreshold:       DefaultUpThreshold,
		BetterMargin:      DefaultBetterMargin,
		BetterMarginRatio: DefaultBetterMarginRatio,
		BetterHold:        DefaultBetterHold,
		FailbackHold:      DefaultFailbackHold,
		LossPenalty:       DefaultLossPenalty,
		Selector:          DefaultSelector,
		Dampening: Dampening{
			Enabled:  true,
			Penalty:  DefaultDampeningPenalty,
			HalfLife: DefaultDampeningHalfLife,
			Suppress: DefaultDampeningSuppress,
			Reuse:    DefaultDampeningReuse,
		},
	}
}

// healthProblem is a problem with one health field, relative to the health
// block.
type healthProblem struct{ field, msg string }

// healthProblems checks h and returns its problems, with fields relative to
// the health block (such as "interval" or "dampening.reuse").
func healthProblems(h Health) []healthProblem {
	var ps []healthProblem
	add := func(f, format string, args ...any) {
		ps = append(ps, healthProblem{f, fmt.Sprintf(format, args...)})
	}
	if h.Interval < MinInterval {
		add("interval", "%v is below the minimum of %v", h.Interval, MinInterval)
	}
	if h.IdleInterval < h.Interval {
		add("idleInterval", "%v is shorter than interval %v", h.IdleInterval, h.Interval)
	}
	if h.DetectMultiplier < 1 || h.DetectMultiplier > MaxDetectMultiplier {
		add("detectMultiplier", "%d is out of range 1..%d", h.DetectMultiplier, MaxDetectMultiplier)
	}
	if h.UpThreshold < 1 {
		add("upThreshold", "%d is below 1", h.UpThreshold)
	}
	for _, d := range []struct {
		f string
		v time.Duration
	}{
		{"betterMargin", h.BetterMargin},
		{"betterHold", h.BetterHold},
		{"failbackHold", h.FailbackHold},
		{"lossPenalty", h.LossPenalty},
	} {
		if d.v < 0 {
			add(d.f, "%v is negative", d.v)
		}
	}
	if !(h.BetterMarginRatio >= 0 && h.BetterMarginRatio <= 1) {
		add("betterMarginRatio", "%v is out of range 0..1", h.BetterMarginRatio)
	}
	switch h.Selector {
	case SelectorLowestCost, SelectorNaive:
	default:
		add("selector", "%q is not a selector (%s or %s)", h.Selector, SelectorLowestCost, SelectorNaive)
	}
	if d := h.Dampening; d.Enabled {
		if !positive(d.Penalty) {
			add("dampening.penalty", "%v is not a positive number", d.Penalty)
		}
		if d.HalfLife <= 0 {
			add("dampening.halfLife", "%v is not positive", d.HalfLife)
		}
		if !positive(d.Reuse) {
			add("dampening.reuse", "%v is not a positive number", d.Reuse)
		}
		if !positive(d.Suppress) {
			add("dampening.suppress", "%v is not a positive number", d.Suppress)
		}
		if positive(d.Reuse) && positive(d.Suppress) && d.Reuse >= d.Suppress {
			add("dampening.reuse", "%v is not below suppress %v", d.Reuse, d.Suppress)
		}
	}
	return ps
}

func positive(f float64) bool { return f > 0 && !math.IsInf(f, 1) }
