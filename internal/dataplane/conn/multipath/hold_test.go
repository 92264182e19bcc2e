package multipath

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

func TestHoldInitiationsDropsOnlyInitiationsOfThatPeer(t *testing.T) {
	b, inner, _ := open(t, 1)
	b.SetPeer("x", []Path{pathA})
	b.SetPeer("y", []Path{pathB})
	x, y := peerEP(t, b, "x"), peerEP(t, b, "y")
	init := wgMessage(msgInitiation, 1, sizeInitiation)
	resp := wgMessage(msgResponse, 2, sizeResponse)
	data := wgMessage(4, 3, 64)

	sent := func(bufs [][]byte, ep string) int {
		t.Helper()
		before := len(inner.Sent())
		var err error
		switch ep {
		case "x":
			err = b.Send(bufs, x)
		default:
			err = b.Send(bufs, y)
		}
		if err != nil {
			t.Fatal(err)
		}
		return len(inner.Sent()) - before
	}
	b.HoldInitiations("x", true)
	for _, tc := range []struct {
		name string
		bufs [][]byte
		to   string
		want int
	}{
		{"initiation to the held peer", [][]byte{init}, "x", 0},
		{"response to the held peer", [][]byte{resp}, "x", 1},
		{"data to the held peer", [][]byte{data, data}, "x", 2},
		{"initiation to another peer", [][]byte{init}, "y", 1},
	} {
		if got := sent(tc.bufs, tc.to); got != tc.want {
			t.Errorf("%s: %d datagrams sent, want %d", tc.name, got, tc.want)
		}
	}
	b.HoldInitiations("x", false)
	if got := sent([][]byte{init}, "x"); got != 1 {
		t.Errorf("initiation after the hold was released: %d sent, want 1", got)
	}
}

// A held initiation is dropped before anything else: it neither waits for
// a pending move's flowlet gap nor completes the move.
func TestHeldInitiationDoesNotWaitForAMove(t *testing.T) {
	b, inner, _ := open(t, 1)
	ft := &fakeTime{now: time.Unix(100, 0)}
	b.SetClock(ft.clock)
	b.SetSleep(ft.sleep)
	b.SetPeer("b", []Path{pathA, pathB})
	ep := peerEP(t, b, "b")
	b.SetActive("b", 1)
	sendTo(t, b, inner, ep, 1)
	b.Move("b", 0, -1, 30*time.Millisecond)
	start := ft.now
	// Traffic that never pauses, up to the hold's deadline.
	for ctr := uint64(2); ft.now.Add(500*time.Microsecond).Sub(start) < failover.FlowletHold; ctr++ {
		ft.now = ft.now.Add(500 * time.Microsecond)
		sendTo(t, b, inner, ep, ctr)
	}
	ft.now = start.Add(failover.FlowletHold) // the next send would move, held
	b.HoldInitiations("b", true)
	before := len(inner.Sent())
	if err := b.Send([][]byte{wgMessage(msgInitiation, 1, sizeInitiation)}, ep); err != nil {
		t.Fatal(err)
	}
	if n := len(inner.Sent()) - before; n != 0 {
		t.Errorf("%d datagrams sent for a held initiation, want 0", n)
	}
	if len(ft.slept) != 0 {
		t.Errorf("the held initiation waited %v, want no wait", ft.slept)
	}
	if _, ok := b.Pending("b"); !ok {
		t.Error("the held initiation completed the pending move")
	}
}

// Holding a peer that is not there (removed, or never set) creates
// nothing.
func TestHoldInitiationsOfUnknownPeerCreatesNone(t *testing.T) {
	b, _, _ := open(t, 1)
	b.SetPeer("x", []Path{pathA})
	b.RemovePeer("x")
	b.HoldInitiations("x", true)
	b.HoldInitiations("y", true)
	if m := b.peers.Load(); m != nil && len(*m) != 0 {
		t.Errorf("peers after holding unknown ones: %v, want none", slices.Collect(maps.Keys(*m)))
	}
}
