package health

import (
	"testing"
	"time"
)

// runWithRequests drives m from start to end like run, with the peer's
// requests arriving over every path every reqEvery (from start, while
// requests reports true) and offered to ReplacedByRequest; probes on a
// path for which answer reports true are answered at once. It returns the
// probes sent and replaced per path, and the transitions.
func runWithRequests(m *Monitor, start, end time.Time, reqEvery time.Duration, requests, answer func(PathID, time.Time) bool) (sent, replaced map[PathID]int, trans []Transition) {
	sent, replaced = map[PathID]int{}, map[PathID]int{}
	lastReq := map[PathID]time.Time{}
	for now := start; now.Before(end); now = m.NextDeadline() {
		for _, p := range m.Due(now, nil) {
			// The latest request at or before now over the path.
			at := start.Add(now.Sub(start) / reqEvery * reqEvery)
			if requests(p.ID, at) {
				lastReq[p.ID] = at
			}
			if m.Demand(p, time.Time{}, now) {
				continue
			}
			if m.ReplacedByRequest(p, lastReq[p.ID], now) {
				replaced[p.ID]++
				continue
			}
			sent[p.ID]++
			if answer(p.ID, now) {
				m.OnReply(p.ID, p.Nonce, now)
			}
		}
		trans = append(trans, m.Tick(now, nil)...)
	}
	return sent, replaced, trans
}

func always(PathID, time.Time) bool { return true }

// On an idle peer's healthy path, the peer's fresh requests replace at
// most requestRefresh probes in a row, never more, and the path stays up.
func TestRequestsReplaceIdlePeerProbes(t *testing.T) {
	m, start := idleTwoPaths(t)
	sent, replaced, trans := runWithRequests(m, start, start.Add(60*time.Second), 100*time.Millisecond, always, always)
	if len(trans) != 0 {
		t.Fatalf("transitions %+v on healthy paths", trans)
	}
	for _, id := range []PathID{pa, pb} {
		// Requests every 100 ms are always fresh: probes sent and
		// replaced alternate.
		if replaced[id] < 10 || replaced[id] > sent[id]+1 || sent[id] > replaced[id]+1 {
			t.Errorf("path %v: %d probes sent, %d replaced: want one in two replaced", id, sent[id], replaced[id])
		}
		st, _ := m.Stats(id)
		if st.Suppressed != uint64(replaced[id]) || st.ProbesLost != 0 {
			t.Errorf("path %v: stats %+v after %d replaced", id, st, replaced[id])
		}
	}
}

// A busy peer's probes are never replaced by its requests, nor is the probe
// of a down path, nor one offered with a stale request.
func TestRequestsNeverReplaceBusyDownOrStale(t *testing.T) {
	m := upActive(t) // peer b busy
	_, replaced, _ := runWithRequests(m, t0, t0.Add(5*time.Second), 10*time.Millisecond, always, always)
	if len(replaced) != 0 {
		t.Fatalf("busy peer: %v probes replaced by requests", replaced)
	}

	m = newTestMonitor(5)
	m.SetPath(pa, Settings{})
	m.SetIdle("b", true)
	_, replaced, trans := runWithRequests(m, t0, t0.Add(5*time.Second), 10*time.Millisecond, always, func(PathID, time.Time) bool { return false })
	if len(replaced) != 0 || len(trans) != 0 {
		t.Fatalf("down path: %v replaced, transitions %+v: want none", replaced, trans)
	}

	m, _ = idleTwoPaths(t)
	now := m.NextDeadline()
	for _, p := range m.Due(now, nil) {
		if m.ReplacedByRequest(p, now.Add(-time.Second), now) { // half the 2 s interval: stale
			t.Fatalf("probe %+v replaced by a request %v old", p, time.Second)
		}
	}
}

// A one-way failure: the peer's requests keep arriving, but our probes on
// pb are lost from the cut on. pb still goes down, at most
// requestRefresh slow intervals plus the detect time after the cut.
func TestRequestsOneWayFailureDetected(t *testing.T) {
	m, start := idleTwoPaths(t)
	cut := start.Add(10 * time.Second)
	_, _, trans := runWithRequests(m, start, cut.Add(20*time.Second), 100*time.Millisecond, always,
		func(id PathID, now time.Time) bool { return id != pb || now.Before(cut) })
	if len(trans) != 1 || trans[0].ID != pb || trans[0].Up {
		t.Fatalf("transitions %+v, want pb down", trans)
	}
	slow := DefaultIdleInterval * idlePeerSlowdown
	bound := requestRefresh*slow + DefaultDetectMultiplier*slow
	if got := trans[0].At.Sub(cut); got > bound {
		t.Fatalf("pb down %v after a one-way cut, want within %v", got, bound)
	}
}

// A failure in both directions (no requests, no answers) is detected as
// without requests: within the detect time of the last evidence.
func TestRequestsTwoWayFailureDetected(t *testing.T) {
	m, start := idleTwoPaths(t)
	cut := start.Add(10 * time.Second)
	live := func(id PathID, now time.Time) bool { return id != pb || now.Before(cut) }
	_, _, trans := runWithRequests(m, start, cut.Add(10*time.Second), 100*time.Millisecond, live, live)
	if len(trans) != 1 || trans[0].ID != pb || trans[0].Up {
		t.Fatalf("transitions %+v, want pb down", trans)
	}
	if detect := DefaultDetectMultiplier * DefaultIdleInterval * idlePeerSlowdown; trans[0].At.After(cut.Add(detect)) {
		t.Fatalf("pb down %v after the cut, want within %v", trans[0].At.Sub(cut), detect)
	}
}
