package health

import (
	"net/netip"
	"time"
)

// Probe verification budget per source address. Checking a probe's MAC is
// cheap (one BLAKE2s compression, BenchmarkSealVerify) but it is work a
// stranger can make us do at line rate, on the receive goroutines that also
// carry our own probes' replies and WireGuard's traffic. So each source IP
// address (not port: a spoofer can vary ports freely) may have at most
// BudgetBurst probes verified at once and BudgetRate per second on average;
// the rest are dropped before any cryptography, and counted. The caller
// exempts the exact addresses of known peer paths (see the agent's
// probeIndex.admit): a flood spoofed from a peer's IP must not spend the
// budget the peer's genuine probes need.
//
// The default rate is 25x what one peer sends at the fastest default
// schedule (10 requests and 10 replies per second per active path, 2 and 2
// per standby path, plus `relay ping` bursts), so several relays behind one
// NAT address never reach it; a flood from one address costs at most 500
// verifications per second. The burst covers `relay ping` on a peer with
// many paths and the catch-up after a stall.
const (
	BudgetRate  = 500 // verifications per second per source address
	BudgetBurst = 100
	// BudgetSources bounds the addresses remembered. When full, the
	// address inserted longest ago is forgotten: it starts again with a
	// full bucket, so forgetting only ever gives a source more budget,
	// never less, and a genuine source is never starved by the table.
	BudgetSources = 4096
)

type bucket struct {
	tokens float64
	last   time.Time
}

// SourceBudget is a token bucket per source address. It is a pure state
// machine: time is an input. It is not safe for concurrent use.
type SourceBudget struct {
	rate    float64 // tokens per second
	burst   float64
	max     int
	buckets map[netip.Addr]*bucket
	order   []netip.Addr // insertion ring, for eviction
	next    int
}

// NewSourceBudget returns a budget of rate verifications per second and
// burst at once per source, remembering at most maxSources sources.
// Non-positive arguments take the defaults above.
func NewSourceBudget(rate, burst, maxSources int) *SourceBudget {
	if rate <= 0 {
		rate = BudgetRate
	}
	if burst <= 0 {
		burst = BudgetBurst
	}
	if maxSources <= 0 {
		maxSources = BudgetSources
	}
	return &SourceBudget{
		rate: float64(rate), burst: float64(burst), max: maxSources,
		buckets: make(map[netip.Addr]*bucket),
	}
}

// Allow reports whether a probe from src may be verified at now, and
// takes one token if so.
func (s *SourceBudget) Allow(src netip.Addr, now time.Time) bool {
	src = src.Unmap()
	b, ok := s.buckets[src]
	if !ok {
		b = s.insert(src, now)
	}
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(s.burst, b.tokens+dt.Seconds()*s.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (s *SourceBudget) insert(src netip.Addr, now time.Time) *bucket {
	b := &bucket{tokens: s.burst, last: now}
	if len(s.order) < s.max {
		s.order = append(s.order, src)
	} else {
		delete(s.buckets, s.order[s.next])
		s.order[s.next] = src
		s.next = (s.next + 1) % s.max
	}
	s.buckets[src] = b
	return b
}

// Len is the number of sources remembered.
func (s *SourceBudget) Len() int { return len(s.buckets) }
