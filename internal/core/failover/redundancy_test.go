package failover

import (
	"testing"
	"time"
)

func TestDuplicatorAuto(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var d Duplicator
	steps := []struct {
		mode Redundancy
		t    Trouble
		at   time.Duration
		want bool
	}{
		{RedundancyAuto, Trouble{}, 0, false},
		{RedundancyAuto, Trouble{Suspect: true}, time.Second, true},       // detection in progress
		{RedundancyAuto, Trouble{}, time.Second + AutoHold - 1, true},     // held
		{RedundancyAuto, Trouble{}, time.Second + AutoHold, false},        // hold over
		{RedundancyAuto, Trouble{Loss: 0.03}, 10 * time.Second, true},     // loss
		{RedundancyAuto, Trouble{Loss: 0.03}, 30 * time.Second, true},     // still lossy
		{RedundancyAuto, Trouble{}, 30*time.Second + AutoHold/2, true},    // held from the last sign
		{RedundancyAuto, Trouble{Switched: true}, 40 * time.Second, true}, // failed over
		{RedundancyOff, Trouble{Suspect: true}, 41 * time.Second, false},  // off ignores trouble
		{RedundancyAuto, Trouble{}, 42 * time.Second, false},              // and forgot the hold
		{RedundancyDuplicate, Trouble{}, 43 * time.Second, true},          // always
		{"", Trouble{Loss: 1}, 44 * time.Second, false},                   // empty is off
	}
	for i, s := range steps {
		if got := d.Step(s.mode, s.t, at(s.at)); got != s.want {
			t.Fatalf("step %d (%s, %+v at %v): %v, want %v", i, s.mode, s.t, s.at, got, s.want)
		}
	}
}

func TestSecondIsCheapestOtherUsable(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(DefaultSettings())
	s.SetPeer("b", []PathSpec{{Name: "direct"}, {Name: "consumer"}, {Name: "backup"}}, DefaultSettings())
	if _, ok := s.Second("b"); ok {
		t.Fatal("a second path before any is chosen")
	}
	s.Observe("b", "direct", Observation{Up: true, SRTT: 10 * time.Millisecond}, t0)
	s.Tick(t0)
	if _, ok := s.Second("b"); ok {
		t.Fatal("a second path with one usable path")
	}
	s.Observe("b", "consumer", Observation{Up: true, SRTT: 30 * time.Millisecond}, t0)
	s.Observe("b", "backup", Observation{Up: true, SRTT: 20 * time.Millisecond}, t0)
	s.Tick(t0)
	if p, ok := s.Second("b"); !ok || p != "backup" {
		t.Fatalf("Second = %q, %v; want backup", p, ok)
	}
	s.Observe("b", "backup", Observation{Up: false}, t0)
	if p, _ := s.Second("b"); p != "consumer" {
		t.Fatalf("Second = %q with backup down, want consumer", p)
	}
}
