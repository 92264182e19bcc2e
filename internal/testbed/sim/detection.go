package sim

import (
	"fmt"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// DetectionReport summarizes CheckDetection.
type DetectionReport struct {
	Checked     int           // cuts of up paths that were checked
	WorstActive time.Duration // slowest detection of a path active throughout
	Violations  []error       // cuts detected later than the bound, or never
}

// CheckDetection checks every finished cut of a path that was up when it
// began: the path must go down within DetectMultiplier x interval + its
// jitter margin (health.DeadlineMargin, from its jitter estimate at the
// down) + the link's largest RTT (the last reply may still be in flight at
// the cut).
// The interval is the active one if the path was the engine's active path
// (Move.Active) from the cut to the detection, the idle one otherwise (no
// peer of the mesh goes idle, so the idle-peer slowdown never applies).
// Cuts shorter than 4 idle intervals are
// skipped (an idle path may legitimately miss them), and so are cuts that
// start while the path may still be down from an earlier one.
func (m *Mesh) CheckDetection() DetectionReport {
	var r DetectionReport
	for _, peer := range m.peers {
		for i, l := range m.links[peer] {
			id := health.PathID{Peer: peer, Path: i}
			for _, c := range l.Cuts {
				if c.To.After(m.Now) || c.To.Sub(c.From) < 4*m.Health.IdleInterval || m.maybeDown(id, c.From) {
					continue
				}
				var td time.Time
				var jitter time.Duration
				for k, d := range m.Downs {
					if d.ID == id && !d.At.Before(c.From) {
						td, jitter = d.At, m.DownJitter[k]
						break
					}
				}
				if td.IsZero() || td.After(c.To) {
					r.Violations = append(r.Violations, fmt.Errorf("%s/%s: cut at %v never detected", peer, l.Name, c.From))
					continue
				}
				iv := m.Health.IdleInterval
				if m.activeThroughout(id, Window{c.From, td}) {
					iv = m.Health.Interval
				}
				detect := time.Duration(m.Health.DetectMultiplier) * iv
				bound := detect + health.DeadlineMargin(jitter, detect) + l.MaxRTT()
				took := td.Sub(c.From)
				if took > bound {
					r.Violations = append(r.Violations, fmt.Errorf("%s/%s: cut at %v detected after %v, bound %v", peer, l.Name, c.From, took, bound))
				}
				if iv == m.Health.Interval {
					r.WorstActive = max(r.WorstActive, took)
				}
				r.Checked++
			}
		}
	}
	return r
}

func (m *Mesh) activeThroughout(id health.PathID, w Window) bool {
	ws := m.active[id]
	if s, ok := m.since[id]; ok {
		ws = append(ws[:len(ws):len(ws)], Window{s, m.Now.Add(time.Hour)})
	}
	for _, a := range ws {
		if !a.From.After(w.From) && !a.To.Before(w.To) {
			return true
		}
	}
	return false
}

// maybeDown: at t the path may not be up (yet): it is early in the run, or
// an earlier cut ended too recently for the path to have come back.
func (m *Mesh) maybeDown(id health.PathID, t time.Time) bool {
	settle := time.Duration(m.Health.DetectMultiplier+m.Health.UpThreshold) * m.Health.IdleInterval
	for _, c := range m.links[id.Peer][id.Path].Cuts {
		if c.From.Before(t) && !c.To.Before(t.Add(-settle)) {
			return true
		}
	}
	return false
}
