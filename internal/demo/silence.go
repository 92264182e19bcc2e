package demo

import (
	"fmt"
	"strings"
	"time"
)

// step is a change the demo made to the direct link: a cut, or the
// restore after it. Redundancy is the relays' redundant sending from the
// step on: the demo changes it at a restore, for the failback and the next
// cut.
type step struct {
	at         time.Time
	cut        bool
	redundancy string
}

// CutSilence is what the application saw of one cut of the direct link:
// the longest silence of its echoes that began while the link was cut (the
// failover), and the longest that began after the restore and before the
// next cut (the failback). Redundancy and FailbackRedundancy are the
// relays' redundant sending during each.
type CutSilence struct {
	Redundancy, FailbackRedundancy string
	Cut, Failback                  time.Duration
}

// silences attributes each gap to the one step in which it began. A step's
// window opens gapThreshold before the step: the last echo before a cut's
// silence can arrive up to one stream interval before the demo records the
// cut. So each gap counts once, for the cut (or the failback) that caused
// it, never for the step before or after.
func silences(gaps []gap, steps []step) []CutSilence {
	var out []CutSilence
	for i, st := range steps {
		if st.cut {
			out = append(out, CutSilence{Redundancy: st.redundancy})
		}
		if len(out) == 0 {
			continue // a restore before any cut: nothing to attribute to
		}
		cs := &out[len(out)-1]
		if !st.cut {
			cs.FailbackRedundancy = st.redundancy
		}
		from := st.at.Add(-gapThreshold)
		var until time.Time // zero: the last step, open-ended
		if i+1 < len(steps) {
			until = steps[i+1].at.Add(-gapThreshold)
		}
		for _, g := range gaps {
			if g.start.Before(from) || (!until.IsZero() && !g.start.Before(until)) {
				continue
			}
			if st.cut {
				cs.Cut = max(cs.Cut, g.d)
			} else {
				cs.Failback = max(cs.Failback, g.d)
			}
		}
	}
	return out
}

// fmtSilences renders the last n cuts' silences, numbered from the first
// cut: "#3 (redundancy off) 320ms, failback (redundancy duplicate) 0s".
func fmtSilences(cs []CutSilence, n int) string {
	if len(cs) == 0 {
		return "none yet"
	}
	var b strings.Builder
	first := max(0, len(cs)-n)
	for i, c := range cs[first:] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "#%d (redundancy %s) %s", first+i+1, c.Redundancy, c.Cut.Round(time.Millisecond))
		if c.FailbackRedundancy != "" {
			fmt.Fprintf(&b, ", failback (redundancy %s) %s", c.FailbackRedundancy, c.Failback.Round(time.Millisecond))
		}
	}
	return b.String()
}

// redundancyFor is the redundant sending the demo gives its n-th cut
// (from 1): every other cut with redundancy duplicate, so that the same
// run shows the silence of a cut without it and with it.
func redundancyFor(n int) string {
	if n%2 == 0 {
		return "duplicate"
	}
	return "off"
}
