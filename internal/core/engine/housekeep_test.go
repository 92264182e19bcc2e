package engine

import (
	"net/netip"
	"slices"
	"testing"
)

// TestRxSeenIsBounded rotates many sources through a peer's Bind counts, as
// NAT rebindings do (the Bind keeps 4 and replaces the oldest): the engine's
// per-peer record holds only the sources the Bind reports now, and evidence
// is reported exactly for the sources whose count moved.
func TestRxSeenIsBounded(t *testing.T) {
	seen := map[netip.AddrPort]uint64{}
	const keep = 4
	var window []Source
	for i := range 1000 {
		addr := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), uint16(1000+i))
		window = append(window, Source{Addr: addr, Packets: 1})
		if len(window) > keep {
			window = window[1:]
		}
		var grew []netip.AddrPort
		newRx(seen, window, func(a netip.AddrPort) { grew = append(grew, a) })
		if !slices.Equal(grew, []netip.AddrPort{addr}) {
			t.Fatalf("round %d: evidence for %v, want only the new source %v", i, grew, addr)
		}
		if len(seen) > keep {
			t.Fatalf("round %d: %d sources remembered, the Bind reports %d", i, len(seen), len(window))
		}
	}
	// A count that did not move is no evidence; one that moved is.
	var grew []netip.AddrPort
	newRx(seen, window, func(a netip.AddrPort) { grew = append(grew, a) })
	if len(grew) != 0 {
		t.Fatalf("evidence %v without new packets", grew)
	}
	window[2].Packets++
	newRx(seen, window, func(a netip.AddrPort) { grew = append(grew, a) })
	if !slices.Equal(grew, []netip.AddrPort{window[2].Addr}) {
		t.Fatalf("evidence %v, want %v", grew, window[2].Addr)
	}
}
