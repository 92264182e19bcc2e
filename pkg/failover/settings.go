package failover

import "time"

// Settings tune the selection of one peer's path.
type Settings struct {
	// BetterMargin: a challenger must be cheaper than the active path by
	// more than this absolute amount. 2 ms is above the RTT noise of a
	// healthy WAN path after EWMA smoothing, and below any latency gain
	// worth a switch (which re-routes every flow of the peer).
	BetterMargin time.Duration
	// BetterMarginRatio: ... and by more than this fraction of the active
	// path's cost. 10% keeps the absolute margin from being trivial on long
	// paths (2 ms of 150 ms is noise; 15 ms is not).
	BetterMarginRatio float64
	// BetterHold: the challenger must stay better for this long. 2 s is
	// ~20 probes of the active path and ~4 of a standby one: a latency
	// spike or a single lucky sample never wins.
	BetterHold time.Duration
	// FailbackHold: a path we left because it went down must also have
	// stayed up this long before we go back. 3 s is twice the detect time
	// of a standby path (500 ms x 3): a path that came back only for
	// moments is seen to fail again before we trust it.
	FailbackHold time.Duration
	// LossPenalty: cost added per unit of loss (fraction 0..1). 200 ms means
	// 1% loss costs 2 ms, i.e. as much as the absolute margin: a path losing
	// 5% of its packets is worse than one 10 ms longer and clean, which is
	// what TCP throughput roughly says.
	LossPenalty time.Duration
	// Naive disables hysteresis, holds, loss and dampening: always the
	// path with the lowest latest RTT sample (+ bias). For comparison in
	// experiments only (perf's flapping scenario).
	Naive bool
	// Dampening of flapping paths (RFC 2439).
	Dampening Dampening
}

// Dampening is RFC 2439 route-flap dampening applied to paths: each down
// transition adds Penalty to the path's figure of merit, which halves every
// HalfLife; above Suppress the path is not chosen until the figure decays
// below Reuse. The defaults (1000, 15 s, 3500, 1500) suppress a path that
// fails every 5 s on its sixth failure and never one that fails every 10 s
// or more slowly; docs/failover.md shows the arithmetic.
type Dampening struct {
	Enabled  bool
	Penalty  float64
	HalfLife time.Duration
	Suppress float64
	Reuse    float64
}

// Default values, see the comments on the Settings fields.
const (
	DefaultBetterMargin      = 2 * time.Millisecond
	DefaultBetterMarginRatio = 0.10
	DefaultBetterHold        = 2 * time.Second
	DefaultFailbackHold      = 3 * time.Second
	DefaultLossPenalty       = 200 * time.Millisecond

	// RFC 2439 suggests a penalty of 1000 per flap and a reuse limit below
	// the suppress limit; the 15 s half-life is scaled down from BGP's 15 min
	// by the ratio of our detect time (0.3 s) to BGP's hold time (~3 min),
	// rounded: a path forgets a flap in about a minute.
	DefaultDampeningPenalty  = 1000
	DefaultDampeningHalfLife = 15 * time.Second
	DefaultDampeningSuppress = 3500
	DefaultDampeningReuse    = 1500
)

// maxSuppressHalfLives caps the figure of merit at Reuse * 2^4, so a path
// that flapped wildly is reconsidered at most 4 half-lives (60 s by default)
// after its last flap, like RFC 2439's maximum suppress time.
const maxSuppressHalfLives = 4

// DefaultSettings returns the defaults: 2 ms / 10% margins, 2 s better hold,
// 3 s failback hold, 200 ms loss penalty, dampening 1000 / 15 s / 3500 / 1500
// enabled.
func DefaultSettings() Settings {
	return Settings{
		BetterMargin:      DefaultBetterMargin,
		BetterMarginRatio: DefaultBetterMarginRatio,
		BetterHold:        DefaultBetterHold,
		FailbackHold:      DefaultFailbackHold,
		LossPenalty:       DefaultLossPenalty,
		Dampening: Dampening{
			Enabled:  true,
			Penalty:  DefaultDampeningPenalty,
			HalfLife: DefaultDampeningHalfLife,
			Suppress: DefaultDampeningSuppress,
			Reuse:    DefaultDampeningReuse,
		},
	}
}
