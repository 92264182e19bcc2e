package failover

import "time"

// Settings tune the selection of one peer's path. This is their one
// definition: internal/core/config embeds Settings in its health block (the YAML
// names are the field names in lowerCamelCase, docs/config.md) and the
// agent hands it to the Selector unchanged.
type Settings struct {
	// BetterMargin: a challenger must be cheaper than the active path by
	// more than this absolute amount.
	BetterMargin time.Duration
	// BetterMarginRatio: ... and by more than this fraction of the active
	// path's cost.
	BetterMarginRatio float64
	// BetterHold: the challenger must stay better for this long.
	BetterHold time.Duration
	// FailbackHold: a path we left because it went down must also have
	// stayed up this long before we go back.
	FailbackHold time.Duration
	// LossPenalty: cost added per unit of loss (fraction 0..1):
	// cost = srtt + bias + LossPenalty*loss.
	LossPenalty time.Duration
	// Selector is SelectorLowestCost (also when empty) or SelectorNaive.
	Selector Algorithm
	// Dampening of flapping paths (RFC 2439).
	Dampening Dampening
	// Redundancy: RedundancyOff (also when empty), RedundancyDuplicate or
	// RedundancyAuto (redundancy.go).
	Redundancy Redundancy
}

// Algorithm names a path selection algorithm: the value of
// Settings.Selector (the YAML setting `selector`).
type Algorithm string

const (
	// SelectorLowestCost picks the usable path with the lowest cost
	// (smoothed RTT + bias + loss penalty), with margins, hold times and
	// dampening.
	SelectorLowestCost Algorithm = "lowest-cost"
	// SelectorNaive disables hysteresis, holds, loss and dampening: always
	// the path with the lowest latest RTT sample (+ bias). It flaps by
	// design and exists only as a baseline for experiments (perf's
	// flapping scenario).
	SelectorNaive Algorithm = "naive"
)

// naive reports whether s selects with SelectorNaive.
func (s Settings) naive() bool { return s.Selector == SelectorNaive }

// Dampening is RFC 2439 route-flap dampening applied to paths: each down
// transition adds Penalty to the path's figure of merit, which halves every
// HalfLife; above Suppress the path is not chosen until the figure decays
// below Reuse. The values are checked by internal/core/config only while Enabled.
type Dampening struct {
	Enabled  bool
	Penalty  float64
	HalfLife time.Duration
	Suppress float64
	Reuse    float64
}

// Defaults of Settings, the ones in force unless the configuration says
// otherwise (docs/config.md and docs/failover.md list them, and a test in
// internal/core/config checks that they agree).
const (
	// DefaultBetterMargin: 2 ms is above the RTT noise of a healthy WAN
	// path after EWMA smoothing on a busy node, and below any latency gain
	// worth a switch (which re-routes every flow of the peer).
	DefaultBetterMargin = 2 * time.Millisecond
	// DefaultBetterMarginRatio: on long paths jitter grows with the RTT,
	// so the challenger must also be 10% better (2 ms of 150 ms is noise;
	// 15 ms is not).
	DefaultBetterMarginRatio = 0.10
	// DefaultBetterHold: 2 s is ~20 probes of the active path and ~4 of a
	// standby one: a latency spike or a single lucky sample never wins.
	DefaultBetterHold = 2 * time.Second
	// DefaultFailbackHold: 3 s is twice the detect time of a standby path
	// (500 ms x 3): a path that came back only for moments is seen to fail
	// again before we trust it.
	DefaultFailbackHold = 3 * time.Second
	// DefaultLossPenalty: 200 ms means 1% loss costs 2 ms, as much as the
	// absolute margin: a path losing 5% of its packets is worse than one
	// 10 ms longer and clean, which is roughly what TCP throughput says.
	DefaultLossPenalty = 200 * time.Millisecond
	// DefaultSelector is the real selector; the naive one is a baseline.
	DefaultSelector = SelectorLowestCost

	// Dampening defaults are RFC 2439's penalty and limits, with the
	// half-life scaled down from BGP's 15 min by the ratio of our detect
	// time (0.3 s) to BGP's hold time (~3 min), rounded: a path forgets a
	// flap in about a minute. It is suppressed on its 4th failure in quick
	// succession (or its 6th at one every 5 s, never at one every 10 s or
	// more slowly) and usable again some 18 s after its last failure
	// (3500 -> 1500 at a 15 s half-life); docs/failover.md shows the
	// arithmetic.
	DefaultDampeningEnabled  = true
	DefaultDampeningPenalty  = 1000
	DefaultDampeningHalfLife = 15 * time.Second
	DefaultDampeningSuppress = 3500
	DefaultDampeningReuse    = 1500
)

// maxSuppressHalfLives caps the figure of merit at Reuse * 2^4, so a path
// that flapped wildly is reconsidered at most 4 half-lives (60 s by default)
// after its last flap, like RFC 2439's maximum suppress time.
const maxSuppressHalfLives = 4

// DefaultSettings returns the defaults above.
func DefaultSettings() Settings {
	return Settings{
		BetterMargin:      DefaultBetterMargin,
		BetterMarginRatio: DefaultBetterMarginRatio,
		BetterHold:        DefaultBetterHold,
		FailbackHold:      DefaultFailbackHold,
		LossPenalty:       DefaultLossPenalty,
		Selector:          DefaultSelector,
		Redundancy:        RedundancyOff,
		Dampening: Dampening{
			Enabled:  DefaultDampeningEnabled,
			Penalty:  DefaultDampeningPenalty,
			HalfLife: DefaultDampeningHalfLife,
			Suppress: DefaultDampeningSuppress,
			Reuse:    DefaultDampeningReuse,
		},
	}
}
