package multipath

import (
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/dataplane/conn/conntest"
	"golang.zx2c4.com/wireguard/conn"
)

// fakeTime is a clock for the bind whose sleeps advance it.
type fakeTime struct {
	now   time.Time
	slept []time.Duration
}

func (f *fakeTime) clock() time.Time { return f.now }
func (f *fakeTime) sleep(d time.Duration) {
	f.slept = append(f.slept, d)
	f.now = f.now.Add(d)
}

// sendTo sends one transport message and returns where it went.
func sendTo(t *testing.T, b *Bind, inner *conntest.Bind, ep conn.Endpoint, ctr uint64) []Path {
	t.Helper()
	if err := b.Send([][]byte{transport(9, ctr, 100, byte(ctr))}, ep); err != nil {
		t.Fatal(err)
	}
	var got []Path
	for _, s := range inner.Sent() {
		for _, p := range []Path{pathA, pathB, pathC} {
			if s.Addr == p.Addr {
				got = append(got, p)
			}
		}
	}
	return got
}

// A move to a faster path waits for a gap in the peer's traffic: back-to-
// back packets stay on the old path, the first packet after a long enough
// pause goes over the new one, unheld.
func TestMoveWaitsForAFlowletBoundary(t *testing.T) {
	b, inner, _ := open(t, 1)
	ft := &fakeTime{now: time.Unix(100, 0)}
	b.SetClock(ft.clock)
	b.SetSleep(ft.sleep)
	b.SetPeer("b", []Path{pathA, pathB})
	ep := peerEP(t, b, "b")
	b.SetActive("b", 1) // on the slow path B
	sendTo(t, b, inner, ep, 1)

	gap := 40 * time.Millisecond
	b.Move("b", 0, -1, gap)
	if to, ok := b.Pending("b"); !ok || to != pathA {
		t.Fatalf("Pending = %v, %v; want a move to A", to, ok)
	}
	for i := range 10 {
		ft.now = ft.now.Add(time.Millisecond)
		if got := sendTo(t, b, inner, ep, uint64(2+i)); len(got) != 1 || got[0] != pathB {
			t.Fatalf("packet %d sent to %v during the flowlet, want B", i, got)
		}
	}
	ft.now = ft.now.Add(gap)
	if got := sendTo(t, b, inner, ep, 20); len(got) != 1 || got[0] != pathA {
		t.Fatalf("after a %v pause sent to %v, want A", gap, got)
	}
	if len(ft.slept) != 0 {
		t.Fatalf("held %v at a natural boundary", ft.slept)
	}
	if _, ok := b.Pending("b"); ok {
		t.Fatal("the move is still pending after it happened")
	}
	if p, _ := b.Active("b"); p != pathA {
		t.Fatalf("Active = %v, want A", p)
	}
}

// Traffic that never pauses moves at the hold's deadline, its first
// packet held until the gap has passed since the last one on the old
// path, and never longer than the gap.
func TestMoveMakesItsGapAfterTheHold(t *testing.T) {
	b, inner, _ := open(t, 1)
	ft := &fakeTime{now: time.Unix(100, 0)}
	b.SetClock(ft.clock)
	b.SetSleep(ft.sleep)
	b.SetPeer("b", []Path{pathA, pathB, pathC})
	ep := peerEP(t, b, "b")
	b.SetActive("b", 1)
	sendTo(t, b, inner, ep, 1)
	gap := 30 * time.Millisecond
	b.Move("b", 0, 2, gap) // with copies to C once moved
	start := ft.now
	var lastOld time.Time
	ctr := uint64(2)
	for {
		ft.now = ft.now.Add(500 * time.Microsecond)
		ctr++
		got := sendTo(t, b, inner, ep, ctr)
		if got[0] == pathB {
			lastOld = ft.now
			if ft.now.Sub(start) > failover.FlowletHold {
				t.Fatalf("still on the old path %v after the move", ft.now.Sub(start))
			}
			continue
		}
		if len(got) != 2 || got[0] != pathA || got[1] != pathC {
			t.Fatalf("moved packet sent to %v, want A and a copy to C", got)
		}
		break
	}
	if len(ft.slept) != 1 || ft.slept[0] > gap {
		t.Fatalf("held %v, want one hold of at most %v", ft.slept, gap)
	}
	if ft.now.Before(lastOld.Add(gap)) {
		t.Fatalf("the moved packet left %v after the last old one, want at least %v", ft.now.Sub(lastOld), gap)
	}
}

// A move never waits when nothing can be overtaken (gap 0), and an
// immediate setter completes a pending move on top of it.
func TestMoveImmediateAndOverride(t *testing.T) {
	b, inner, _ := open(t, 1)
	ft := &fakeTime{now: time.Unix(100, 0)}
	b.SetClock(ft.clock)
	b.SetSleep(ft.sleep)
	b.SetPeer("b", []Path{pathA, pathB, pathC})
	ep := peerEP(t, b, "b")
	sendTo(t, b, inner, ep, 1)
	b.Move("b", 1, -1, 0)
	if got := sendTo(t, b, inner, ep, 2); got[0] != pathB {
		t.Fatalf("gap 0: sent to %v, want B at once", got)
	}
	b.Move("b", 0, -1, 40*time.Millisecond)
	b.SetSecondary("b", 2) // decided after the move: builds on it, now
	if _, ok := b.Pending("b"); ok {
		t.Fatal("an immediate setter left the move pending")
	}
	if got := sendTo(t, b, inner, ep, 3); len(got) != 2 || got[0] != pathA || got[1] != pathC {
		t.Fatalf("sent to %v, want A with a copy to C", got)
	}
}
