package multipath

import (
	"testing"
	"testing/synctest"
	"time"
)

// With the real clock (the default, and SetClock(nil) after a fake one),
// LastRx dates authenticated data by the real time it was credited.
func TestLastRxRealClock(t *testing.T) {
	b, inner, fn := open(t, 4)
	b.SetClock(func() time.Time { return time.Unix(1000, 0) })
	b.SetClock(nil)
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, peerEP(t, b, "b"))

	before := time.Now()
	if err := inner.Inject(transport(0xB1, 1, 100, 7), pathA.Addr); err != nil {
		t.Fatal(err)
	}
	sizes, bufs, _ := receive(t, fn, 1)
	authenticate(b, bufs, sizes)
	after := time.Now()

	got := b.LastRx("b", pathA.Addr)
	if got.IsZero() || got.Before(before) || got.After(after) {
		t.Fatalf("LastRx = %v, want within [%v, %v]", got, before, after)
	}
	if since := time.Since(got); since < 0 {
		t.Fatalf("LastRx is %v in the future of the monotonic clock", -since)
	}
}

// With the real clock (here synctest's, which moves only when every
// goroutine of the bubble waits), a move that waits for a flowlet boundary
// keeps back-to-back traffic on the old path and happens once the traffic
// has paused for the gap.
func TestMoveRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, inner, _ := open(t, 1)
		b.SetPeer("b", []Path{pathA, pathB})
		ep := peerEP(t, b, "b")
		b.SetActive("b", 1)
		time.Sleep(time.Millisecond) // the clock must move: the bind clock's 0 means "never sent"
		sendTo(t, b, inner, ep, 1)

		gap := 5 * time.Millisecond
		b.Move("b", 0, -1, gap)
		if to, ok := b.Pending("b"); !ok || to != pathA {
			t.Fatalf("Pending = %v, %v; want a move to A", to, ok)
		}
		if got := sendTo(t, b, inner, ep, 2); len(got) != 1 || got[0] != pathB {
			t.Fatalf("back-to-back send went to %v, want B", got)
		}
		time.Sleep(gap) // a pause in the traffic
		if got := sendTo(t, b, inner, ep, 3); len(got) != 1 || got[0] != pathA {
			t.Fatalf("after a %v pause sent to %v, want A", gap, got)
		}
	})
}

// Reading the bind's clock costs one clock read per batch on both sides
// of the data path; the real clock reads the monotonic clock alone.
func BenchmarkNanos(b *testing.B) {
	for _, c := range []struct {
		name string
		now  func() time.Time
	}{{"real", nil}, {"func", time.Now}} {
		b.Run(c.name, func(b *testing.B) {
			bd := New(nil)
			bd.SetClock(c.now)
			for b.Loop() {
				bd.nanos()
			}
		})
	}
}
