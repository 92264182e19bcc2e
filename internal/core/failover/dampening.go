package failover

import (
	"math"
	"time"
)

// merit is a path's RFC 2439 figure of merit: value as of time at.
type merit struct {
	value      float64
	at         time.Time
	suppressed bool
}

// decay brings the figure to now: value * 2^(-(now-at)/halfLife). Figures
// below 1 are rounded to zero so idle paths cost nothing on later ticks.
func (m *merit) decay(d Dampening, now time.Time) {
	if m.value == 0 || !now.After(m.at) {
		if m.value == 0 {
			m.at = now
		}
		return
	}
	if d.HalfLife > 0 {
		m.value *= math.Exp2(-float64(now.Sub(m.at)) / float64(d.HalfLife))
	} else {
		m.value = 0
	}
	if m.value < 1 {
		m.value = 0
	}
	m.at = now
	if m.suppressed && m.value < d.Reuse {
		m.suppressed = false
	}
}

// flap adds a down transition at now.
func (m *merit) flap(d Dampening, now time.Time) {
	m.decay(d, now)
	m.value += d.Penalty
	if ceiling := d.Reuse * (1 << maxSuppressHalfLives); d.Reuse > 0 && m.value > ceiling {
		m.value = ceiling
	}
	m.at = now
	if m.value > d.Suppress {
		m.suppressed = true
	}
}

// reuseAt is when a suppressed figure decays below Reuse; zero if it is not
// suppressed.
func (m *merit) reuseAt(d Dampening) time.Time {
	if !m.suppressed || d.Reuse <= 0 || m.value < d.Reuse {
		return time.Time{}
	}
	halves := math.Log2(m.value / d.Reuse)
	// +1µs: safely below Reuse despite float rounding, so a Tick at this
	// instant does unsuppress it.
	return m.at.Add(time.Duration(halves*float64(d.HalfLife)) + time.Microsecond)
}
