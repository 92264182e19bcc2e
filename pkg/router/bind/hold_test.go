package bind

import "testing"

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
