package health

import (
	"testing"
	"time"
)

func TestDetectorSteps(t *testing.T) {
	const detect = 300 * time.Millisecond
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		at      int    // ms after t0
		ev      string // "answer", "passive", "check"
		changed bool   // return value
		up      bool   // state after
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first answer brings a new path up", []step{
			{0, "check", false, false},
			{10, "answer", true, true},
		}},
		{"down after detect time, exactly at the deadline", []step{
			{0, "answer", true, true},
			{299, "check", false, true},
			{300, "check", true, false},
		}},
		{"passive evidence keeps it up", []step{
			{0, "answer", true, true},
			{250, "passive", false, true},
			{549, "check", false, true},
			{550, "check", true, false},
		}},
		{"after a down, three consecutive answers", []step{
			{0, "answer", true, true},
			{300, "check", true, false},
			{400, "answer", false, false},
			{500, "answer", false, false},
			{600, "answer", true, true},
		}},
		{"passive evidence never brings it up", []step{
			{0, "answer", true, true},
			{300, "check", true, false},
			{310, "passive", false, false},
			{320, "passive", false, false},
			{330, "passive", false, false},
			{340, "passive", false, false},
		}},
		{"a gap longer than detect resets the count", []step{
			{0, "answer", true, true},
			{300, "check", true, false},
			{400, "answer", false, false},
			{500, "answer", false, false},
			{801, "answer", false, false}, // gap 301ms > 300ms: count restarts at 1
			{900, "answer", false, false},
			{1000, "answer", true, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Detector
			for i, s := range tt.steps {
				var changed bool
				switch s.ev {
				case "answer":
					changed = d.OnAnswer(ms(s.at), detect, 3)
				case "passive":
					d.OnPassive(ms(s.at), detect)
				case "check":
					changed = d.Check(ms(s.at))
				}
				if changed != s.changed || d.Up() != s.up {
					t.Fatalf("step %d (%s at %dms): changed %v up %v, want %v %v",
						i, s.ev, s.at, changed, d.Up(), s.changed, s.up)
				}
			}
		})
	}
}

func TestDetectorDownAtIsDeadline(t *testing.T) {
	var d Detector
	d.OnAnswer(t0, 300*time.Millisecond, 3)
	if !d.Check(t0.Add(time.Second)) {
		t.Fatal("not down")
	}
	if got := d.LastChange(); !got.Equal(t0.Add(300 * time.Millisecond)) {
		t.Fatalf("LastChange = %v, want the deadline", got.Sub(t0))
	}
}

func TestDetectorRetime(t *testing.T) {
	const idle, active = 3 * time.Second, 300 * time.Millisecond
	var d Detector
	d.OnAnswer(t0, idle, 3)
	// Turned active 2s after the last idle answer: the deadline is not
	// t0+300ms (already past) but now+300ms.
	d.Retime(t0.Add(2*time.Second), active, 0)
	if got := d.Deadline().Sub(t0); got != 2300*time.Millisecond {
		t.Fatalf("deadline after shrink = %v, want 2.3s", got)
	}
	// Back to idle: from the last evidence.
	d.Retime(t0.Add(2100*time.Millisecond), idle, 0)
	if got := d.Deadline().Sub(t0); got != 3*time.Second {
		t.Fatalf("deadline after grow = %v, want 3s", got)
	}
}
