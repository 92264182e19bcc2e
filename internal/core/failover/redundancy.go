package failover

import "time"

// Redundancy is the redundant sending mode of a peer (the YAML setting
// `redundancy`): whether each packet to the peer also goes, as a copy,
// over a second path. The receiving relay's WireGuard keeps the first copy
// and drops the other as a replay, so a cut of one path loses nothing as
// long as the other delivers, at the price of sending the peer's traffic
// twice.
type Redundancy string

const (
	// RedundancyOff sends over the active path only (also when empty).
	RedundancyOff Redundancy = "off"
	// RedundancyDuplicate always sends over the best two usable paths.
	RedundancyDuplicate Redundancy = "duplicate"
	// RedundancyAuto duplicates only while the active path shows trouble
	// (loss, or a detection in progress), and AutoHold beyond.
	RedundancyAuto Redundancy = "auto"
)

// Valid reports whether r is a known mode (empty counts as off).
func (r Redundancy) Valid() bool {
	switch r {
	case "", RedundancyOff, RedundancyDuplicate, RedundancyAuto:
		return true
	}
	return false
}

// AutoHold is how long auto mode keeps duplicating after the last sign of
// trouble on the active path. A path that lost a probe or went silent is
// likely to do it again soon (a flapping link, a congested queue); five
// seconds spans several detect times and the selector's holds, so a
// failover and the first seconds on the new path are covered, without
// doubling the traffic of a peer for long after a single lost probe.
const AutoHold = 5 * time.Second

// Trouble is what auto mode watches on the active path, from the health
// monitor: its loss estimate, and whether it is suspect (evidence overdue:
// a detection is in progress).
type Trouble struct {
	Loss    float64
	Suspect bool
	// Switched: the selector just moved the peer for a reason other than
	// a better path (down, dampened, removed, recovered).
	Switched bool
}

func (t Trouble) any() bool { return t.Loss > 0 || t.Suspect || t.Switched }

// Duplicator decides for one peer, from its mode and the trouble it is fed
// with the current time, whether to send redundantly. It is a pure state
// machine: time is an input. The zero value is off with no history.
type Duplicator struct {
	until time.Time // auto: duplicate until then
}

// Step returns whether to duplicate at now, given mode and the active
// path's trouble now.
func (d *Duplicator) Step(mode Redundancy, t Trouble, now time.Time) bool {
	switch mode {
	case RedundancyDuplicate:
		return true
	case RedundancyAuto:
		if t.any() {
			d.until = now.Add(AutoHold)
		}
		return now.Before(d.until)
	default:
		d.until = time.Time{}
		return false
	}
}

// Until is when auto mode stops duplicating without further trouble
// (zero: not duplicating in auto mode). The shell wakes then.
func (d *Duplicator) Until() time.Time { return d.until }

// Second returns the usable path of lowest cost other than the active
// one, the earliest in config order on ties: where redundant copies go.
// ok is false when the peer is unreachable or has no other usable path.
func (s *Selector) Second(peer string) (path string, ok bool) {
	p, found := s.peers[peer]
	if !found || p.active == "" {
		return "", false
	}
	var b *pathState
	for _, st := range p.paths {
		if st.spec.Name != p.active && p.usable(st) && (b == nil || p.cost(st) < p.cost(b)) {
			b = st
		}
	}
	if b == nil {
		return "", false
	}
	return b.spec.Name, true
}
