package demo

import (
	"testing"
	"time"
)

// TestSilencesEachToItsOwnCut: each silence counts once, for the step in
// which it began: the failover silence of a cut whose last echo arrived
// just before the demo recorded the cut goes to that cut, not to the
// previous failback; a failback silence goes to its cut's failback, not to
// the next cut; and a silence still going on counts for the last cut.
func TestSilencesEachToItsOwnCut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	steps := []step{
		{at: at(1000), cut: true, redundancy: "off"},
		{at: at(9000), redundancy: "duplicate"},
		{at: at(19000), cut: true, redundancy: "duplicate"},
		{at: at(27000), redundancy: "off"},
		{at: at(37000), cut: true, redundancy: "off"},
	}
	gaps := []gap{
		{start: at(995), d: 320 * time.Millisecond},   // cut 1, its last echo 5 ms before the cut
		{start: at(12100), d: 40 * time.Millisecond},  // failback 1
		{start: at(18990), d: 60 * time.Millisecond},  // cut 2, its last echo 10 ms before the cut
		{start: at(36995), d: 900 * time.Millisecond}, // cut 3, still going on
		{start: at(500), d: 70 * time.Millisecond},    // before any cut: nobody's
	}
	got := silences(gaps, steps)
	want := []CutSilence{
		{Redundancy: "off", FailbackRedundancy: "duplicate", Cut: 320 * time.Millisecond, Failback: 40 * time.Millisecond},
		{Redundancy: "duplicate", FailbackRedundancy: "off", Cut: 60 * time.Millisecond},
		{Redundancy: "off", Cut: 900 * time.Millisecond},
	}
	if len(got) != len(want) {
		t.Fatalf("silences %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cut %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	s := fmtSilences(got, 2)
	if s != "#2 (redundancy duplicate) 60ms, failback (redundancy off) 0s; #3 (redundancy off) 900ms" {
		t.Errorf("fmtSilences: %q: want the last two, numbered from the first cut", s)
	}
}

// TestRedundancyAlternates: odd cuts without redundancy, even ones with
// duplicate; the mapping the relays get keeps the demo's health settings.
func TestRedundancyAlternates(t *testing.T) {
	for n, want := range map[int]string{1: "off", 2: "duplicate", 3: "off", 4: "duplicate"} {
		if got := redundancyFor(n); got != want {
			t.Errorf("cut %d: %s, want %s", n, got, want)
		}
	}
	if got := withRedundancy("", "duplicate"); got != "{redundancy: duplicate}" {
		t.Errorf("no health: %q", got)
	}
	if got := withRedundancy(" {interval: 50ms} ", "off"); got != "{redundancy: off, interval: 50ms}" {
		t.Errorf("with health: %q", got)
	}
}
