package health

import (
	"net/netip"
	"testing"
	"time"
)

// TestBudgetFloodDoesNotStarveOthers floods from one source, far beyond its
// budget, interleaved with a genuine peer's probes from another source at
// its normal rate: every genuine probe is allowed, the flood is cut to the
// budget.
func TestBudgetFloodDoesNotStarveOthers(t *testing.T) {
	s := NewSourceBudget(0, 0, 0)
	flood := netip.MustParseAddr("203.0.113.9")
	peer := netip.MustParseAddr("198.51.100.7")
	var floodOK, peerOK, peerSent int
	for ms := range 10_000 { // 10 s
		now := t0.Add(time.Duration(ms) * time.Millisecond)
		for range 100 { // 100,000 forged probes per second
			if s.Allow(flood, now) {
				floodOK++
			}
		}
		if ms%50 == 0 { // 20 per second: requests and replies of one active path
			peerSent++
			if s.Allow(peer, now) {
				peerOK++
			}
		}
	}
	if peerOK != peerSent {
		t.Fatalf("genuine source: %d of %d probes allowed", peerOK, peerSent)
	}
	if max := BudgetBurst + 10*BudgetRate; floodOK > max {
		t.Fatalf("flood: %d verifications allowed, budget is %d", floodOK, max)
	}
	if floodOK < 10*BudgetRate {
		t.Fatalf("flood: only %d allowed, the rate is %d/s over 10 s", floodOK, BudgetRate)
	}
}

func TestBudgetRefillsAndPortsShare(t *testing.T) {
	s := NewSourceBudget(10, 3, 0)
	a := netip.MustParseAddr("192.0.2.1")
	for i := range 3 {
		if !s.Allow(a, t0) {
			t.Fatalf("burst probe %d refused", i)
		}
	}
	if s.Allow(a, t0) {
		t.Fatal("fourth probe at once allowed with a burst of 3")
	}
	if s.Allow(netip.AddrFrom16(a.As16()), t0) {
		t.Fatal("the IPv4-mapped form of the address has a budget of its own")
	}
	if !s.Allow(a, t0.Add(100*time.Millisecond)) {
		t.Fatal("no token after 1/rate")
	}
	if s.Allow(a, t0.Add(100*time.Millisecond)) {
		t.Fatal("two tokens after 1/rate")
	}
	later, allowed := t0.Add(time.Hour), 0
	for range 5 {
		if s.Allow(a, later) {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("%d allowed after an hour, want the burst of 3: refill is not capped", allowed)
	}
}

// TestBudgetTableIsBounded sprays from many addresses: the table stays at
// its bound, and a forgotten source comes back with a full bucket.
func TestBudgetTableIsBounded(t *testing.T) {
	s := NewSourceBudget(1, 2, 16)
	first := netip.AddrFrom4([4]byte{10, 0, 0, 0})
	s.Allow(first, t0)
	s.Allow(first, t0)
	if s.Allow(first, t0) {
		t.Fatal("budget not spent")
	}
	for i := range 1000 {
		s.Allow(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), t0)
		if s.Len() > 16 {
			t.Fatalf("%d sources remembered, bound 16", s.Len())
		}
	}
	if !s.Allow(first, t0) {
		t.Fatal("an evicted source did not start again with a full bucket")
	}
}
