package multipath

import (
	"net/netip"
	"testing"
	"time"
)

// A path's address changing (the agent follows a host name's DNS answer)
// keeps the peer's active and secondary paths, by name: redundant copies
// go on, to the secondary's new address.
func TestSetPeerKeepsSecondaryByName(t *testing.T) {
	b, inner, _ := open(t, 1)
	b.SetPeer("b", []Path{pathA, pathB, pathC})
	b.SetActive("b", 1)
	b.SetSecondary("b", 2)

	movedC := Path{Name: pathC.Name, Addr: netip.MustParseAddrPort("192.0.2.99:51820")}
	b.SetPeer("b", []Path{movedC, pathA, pathB}) // reordered too
	if got, ok := b.Active("b"); !ok || got != pathB {
		t.Fatalf("Active = %v, %v; want %v", got, ok, pathB)
	}
	if got, ok := b.Secondary("b"); !ok || got != movedC {
		t.Fatalf("Secondary = %v, %v; want %v", got, ok, movedC)
	}
	ep := peerEP(t, b, "b")
	if err := b.Send([][]byte{transport(9, 1, 100, 1)}, ep); err != nil {
		t.Fatal(err)
	}
	var to []netip.AddrPort
	for _, s := range inner.Sent() {
		to = append(to, s.Addr)
	}
	if len(to) != 2 || to[0] != pathB.Addr || to[1] != movedC.Addr {
		t.Errorf("sent to %v; want %v then the copy to %v", to, pathB.Addr, movedC.Addr)
	}

	b.SetPeer("b", []Path{pathA, pathB}) // the secondary is gone
	if got, ok := b.Secondary("b"); ok {
		t.Errorf("Secondary = %v after its path was removed; want none", got)
	}
}

// A move waiting for a flowlet boundary stays pending across SetPeer.
func TestSetPeerKeepsAPendingMove(t *testing.T) {
	b, _, _ := open(t, 1)
	ft := &fakeTime{now: time.Unix(100, 0)}
	b.SetClock(ft.clock)
	b.SetSleep(ft.sleep)
	b.SetPeer("b", []Path{pathA, pathB, pathC})
	b.SetActive("b", 1)
	b.Move("b", 0, 2, 40*time.Millisecond)

	movedA := Path{Name: pathA.Name, Addr: netip.MustParseAddrPort("192.0.2.98:51820")}
	b.SetPeer("b", []Path{movedA, pathB, pathC})
	if got, ok := b.Active("b"); !ok || got != pathB {
		t.Errorf("Active = %v, %v; want %v until the boundary", got, ok, pathB)
	}
	if to, ok := b.Pending("b"); !ok || to != movedA {
		t.Errorf("Pending = %v, %v; want the move to %v", to, ok, movedA)
	}
	ft.now = ft.now.Add(time.Second) // a pause: the move completes
	if err := b.Send([][]byte{transport(9, 1, 100, 1)}, peerEP(t, b, "b")); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Active("b"); got != movedA {
		t.Errorf("Active after the boundary = %v; want %v", got, movedA)
	}
	if got, ok := b.Secondary("b"); !ok || got != pathC {
		t.Errorf("Secondary after the boundary = %v, %v; want %v", got, ok, pathC)
	}
}
