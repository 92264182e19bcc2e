package health

import "time"

// Settings are the probing and detection parameters of one path. This is
// their one definition: internal/core/config embeds Settings in its health block (the
// YAML names are the field names in lowerCamelCase, docs/config.md) and the
// agent hands it to Monitor.SetPath unchanged.
type Settings struct {
	// Interval between probes on an active path (one carrying traffic).
	Interval time.Duration
	// IdleInterval between probes on a standby path.
	IdleInterval time.Duration
	// DetectMultiplier: a path is down after this many intervals without
	// evidence.
	DetectMultiplier int
	// UpThreshold: consecutive answers needed to bring a down path up.
	UpThreshold int
	// LossWindow: outcomes the loss estimate covers (0: DefaultLossWindow).
	// It is not a configuration setting.
	LossWindow int
}

// Defaults of Settings, the ones in force unless the configuration says
// otherwise (docs/config.md and docs/failover.md list them, and a test in
// internal/core/config checks that they agree). They follow BFD's usual fast profile
// (RFC 5880/7419: 50 ms x 3) in spirit, one step slower because probes ride
// userspace UDP over WANs with tens of ms of jitter, on shared nodes; Liqo's
// own gateway notices a dead link only after about 10 s, which is what the
// relay is there to beat.
const (
	// DefaultInterval of 100 ms with DefaultDetectMultiplier 3 detects a
	// dead active path in 300 ms, 30x faster than a Liqo gateway, at one
	// 56-byte packet per 100 ms per path.
	DefaultInterval = 100 * time.Millisecond
	// DefaultIdleInterval keeps standby paths measured (RTT and loss) at a
	// fifth of the active rate: they carry no traffic, but a failover must
	// land on a path whose state is at most 1.5 s old, and a dead standby
	// is noticed within 1.5 s.
	DefaultIdleInterval = 500 * time.Millisecond
	// DefaultDetectMultiplier is BFD's usual 3: one or two lost probes are
	// common and must not cause a failover.
	DefaultDetectMultiplier = 3
	// DefaultUpThreshold: three answers in a row before a path counts as up
	// again, so that a single lucky answer does not bring it back.
	DefaultUpThreshold = 3
)

// DefaultSettings returns the defaults above, with DefaultLossWindow.
func DefaultSettings() Settings {
	return Settings{
		Interval:         DefaultInterval,
		IdleInterval:     DefaultIdleInterval,
		DetectMultiplier: DefaultDetectMultiplier,
		UpThreshold:      DefaultUpThreshold,
		LossWindow:       DefaultLossWindow,
	}
}
