package wanem

import "math/rand/v2"

// geState is the state of a Gilbert-Elliott channel: true while Bad.
type geState struct{ bad bool }

// lose moves the channel one frame forward and reports whether that frame
// is lost. The state moves first, so a burst starts with the frame that
// entered Bad.
func (g *geState) lose(m *GilbertElliott, rng *rand.Rand) bool {
	if g.bad {
		if rng.Float64() < m.R {
			g.bad = false
		}
	} else if rng.Float64() < m.P {
		g.bad = true
	}
	p := m.LossGood
	if g.bad {
		p = m.LossBad
	}
	return p > 0 && rng.Float64() < p
}
