package config

import (
	"fmt"
	"math"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// Probing is internal/core/health's probe and detection settings (interval,
// idleInterval, detectMultiplier, upThreshold); internal/core/health owns the type and
// its defaults. LossWindow is not configurable: it keeps health's default.
type Probing = health.Settings

// Selection is internal/core/failover's path selection settings (betterMargin,
// betterMarginRatio, betterHold, failbackHold, lossPenalty, selector,
// dampening); internal/core/failover owns the type and its defaults.
type Selection = failover.Settings

// Dampening configures RFC 2439 style flap dampening of paths, as
// internal/core/failover defines it.
type Dampening = failover.Dampening

// Health configures probing and path selection for a peer. It is made of
// the settings types of the packages that use them, so the agent hands
// Probing to the health monitor and Selection to the selector as they are.
// Each YAML field of the health block is the name of a field of these types
// in lowerCamelCase.
type Health struct {
	Probing
	Selection
}

// Selector names of Health.Selector, as internal/core/failover defines them.
const (
	// SelectorLowestCost picks the healthy path with the lowest cost
	// (smoothed RTT + bias + loss penalty), with hysteresis and hold times.
	SelectorLowestCost = failover.SelectorLowestCost
	// SelectorNaive always picks the path with the lowest last RTT. It flaps
	// by design and exists only as a baseline for comparisons.
	SelectorNaive = failover.SelectorNaive
)

// DefaultHealth returns the default health settings: those of internal/core/health
// and internal/core/failover.
func DefaultHealth() Health {
	return Health{Probing: health.DefaultSettings(), Selection: failover.DefaultSettings()}
}

// Limits of the health settings.
const (
	// MinInterval: below 10 ms, timer and scheduling noise in userspace
	// dominates the measurement and probes become a load.
	MinInterval         = 10 * time.Millisecond
	MaxDetectMultiplier = 255 // as in BFD
)

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
	if !h.Redundancy.Valid() {
		add("redundancy", "%q is not a redundancy mode (%s, %s or %s)", h.Redundancy, failover.RedundancyOff, failover.RedundancyDuplicate, failover.RedundancyAuto)
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
