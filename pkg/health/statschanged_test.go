package health

import (
	"slices"
	"testing"
	"time"
)

// StatsChanged names each new path once, then only the paths that had a
// probe outcome (an answer or a loss), and never a removed one.
func TestStatsChanged(t *testing.T) {
	m := newTestMonitor(11)
	m.SetPath(pa, Settings{})
	m.SetPath(pb, Settings{})
	if got := m.StatsChanged(nil); !slices.Equal(sorted(got), []PathID{pa, pb}) {
		t.Fatalf("after SetPath: %v, want both paths", got)
	}
	if got := m.StatsChanged(nil); len(got) != 0 {
		t.Fatalf("nothing happened: %v", got)
	}
	probes := m.Due(t0, nil) // sending alone changes neither loss nor lost
	if got := m.StatsChanged(nil); len(got) != 0 {
		t.Fatalf("after sending: %v", got)
	}
	for _, p := range probes {
		if p.ID == pa {
			m.OnReply(pa, p.Nonce, t0.Add(time.Millisecond))
		}
	}
	if got := m.StatsChanged(nil); !slices.Equal(got, []PathID{pa}) {
		t.Fatalf("after pa's answer: %v, want [pa]", got)
	}
	// pb's probe expires unanswered: a loss.
	var lost bool
	for now := t0; now.Before(t0.Add(5 * time.Second)); now = m.NextDeadline() {
		m.Due(now, nil)
		m.Tick(now, nil)
		if st, _ := m.Stats(pb); st.ProbesLost > 0 {
			lost = true
			break
		}
	}
	if !lost {
		t.Fatal("setup: pb lost no probe")
	}
	if got := m.StatsChanged(nil); !slices.Contains(got, pb) {
		t.Fatalf("after pb's loss: %v, want pb in it", got)
	}
	m.Due(m.NextDeadline(), nil)
	for range 10 { // pb loses more; then it goes
		m.Tick(m.NextDeadline(), nil)
		m.Due(m.NextDeadline(), nil)
	}
	m.RemovePath(pb)
	if got := m.StatsChanged(nil); slices.Contains(got, pb) {
		t.Fatalf("removed path reported: %v", got)
	}
}

func sorted(ids []PathID) []PathID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(x, y PathID) int { return x.Path - y.Path })
	return out
}
