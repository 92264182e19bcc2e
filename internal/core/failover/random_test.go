package failover

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestSelectorRandomInvariants drives a Selector with random observations
// and checks, after every Tick, properties that must hold whatever the
// sequence:
//   - a peer with a usable path is reachable, on a usable path; a peer with
//     none is unreachable;
//   - "better" and "failback" only go to a path cheaper by both margins,
//     "failback" only to a path up for FailbackHold;
//   - "down" leaves a path that is down, "dampened" one that is dampened;
//   - an event's From is the previously active path.
func TestSelectorRandomInvariants(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 3))
		s := DefaultSettings()
		if seed%3 == 0 {
			s.Dampening.Enabled = false
		}
		sel := New(s)
		peers := []string{"a", "b", "c"}
		paths := []string{"direct", "consumer", "backup"}
		for _, p := range peers {
			sel.SetPeer(p, []PathSpec{{Name: "direct"}, {Name: "consumer", Bias: 3 * time.Millisecond}, {Name: "backup", Bias: 10 * time.Millisecond}}, s)
		}
		active := map[string]string{}
		reasons := map[Reason]int{}
		now := t0
		for step := range 3000 {
			now = now.Add(time.Duration(50+r.IntN(950)) * time.Millisecond)
			for range r.IntN(4) {
				o := Observation{Up: r.IntN(6) != 0, SRTT: time.Duration(5+r.IntN(40)) * time.Millisecond}
				if r.IntN(4) == 0 {
					o.Loss = float64(r.IntN(20)) / 100
				}
				sel.Observe(peers[r.IntN(3)], paths[r.IntN(3)], o, now)
			}
			for _, ev := range sel.Tick(now) {
				where := fmt.Sprintf("seed %d step %d %v", seed, step, ev)
				if ev.From != active[ev.Peer] {
					t.Fatalf("%s: From is not the previous active %q", where, active[ev.Peer])
				}
				active[ev.Peer] = ev.To
				reasons[ev.Reason]++
				from, _ := sel.PathInfo(ev.Peer, ev.From)
				to, _ := sel.PathInfo(ev.Peer, ev.To)
				switch ev.Reason {
				case ReasonBetter, ReasonFailback:
					gain := from.Cost - to.Cost
					if gain <= s.BetterMargin || float64(gain) <= s.BetterMarginRatio*float64(from.Cost) {
						t.Fatalf("%s: gain %v from cost %v is inside the margins", where, gain, from.Cost)
					}
					if ev.Reason == ReasonFailback && now.Sub(to.UpSince) < s.FailbackHold {
						t.Fatalf("%s: failback to a path up only since %v", where, now.Sub(to.UpSince))
					}
				case ReasonDown:
					if from.State == Up {
						t.Fatalf("%s: left a path that is up", where)
					}
				case ReasonDampened:
					if from.State != Dampened {
						t.Fatalf("%s: left a path that is %v", where, from.State)
					}
				}
			}
			for _, p := range peers {
				usable := false
				for _, name := range paths {
					usable = usable || sel.PathState(p, name) == Up
				}
				act, ok := sel.Active(p)
				switch {
				case usable && !ok:
					t.Fatalf("seed %d step %d: %s unreachable with a usable path", seed, step, p)
				case !usable && ok:
					t.Fatalf("seed %d step %d: %s reachable on %s with no usable path", seed, step, p, act)
				case ok && sel.PathState(p, act) != Up:
					t.Fatalf("seed %d step %d: %s active on %s, which is %v", seed, step, p, act, sel.PathState(p, act))
				}
			}
		}
		if reasons[ReasonBetter] == 0 || reasons[ReasonDown] == 0 || reasons[ReasonAllDown] == 0 {
			t.Fatalf("seed %d: the sequence does not exercise the rules: %v", seed, reasons)
		}
		if seed == 1 {
			t.Logf("seed 1: %v", reasons)
		}
	}
}
