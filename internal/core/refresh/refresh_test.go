package refresh

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

var (
	t0    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ip1   = netip.MustParseAddr("192.0.2.1")
	ip2   = netip.MustParseAddr("192.0.2.2")
	ip3   = netip.MustParseAddr("192.0.2.3")
	errSF = errors.New("SERVFAIL")
	set   = Settings{MinTTL: 5 * time.Second, MaxTTL: time.Hour, Grace: time.Minute, RetryMin: time.Second, RetryMax: 8 * time.Second}
)

// step is one input at an offset from t0 and what the name looks like after.
type step struct {
	at    time.Duration
	addrs []netip.Addr // answer (nil with err == nil: Tick)
	ttl   time.Duration
	err   error
	// want
	changed bool
	state   State
	addr    netip.Addr
	next    time.Duration // Next() - t0
}

func run(t *testing.T, steps []step) {
	t.Helper()
	n := New(set)
	if !n.Due(t0) || n.State() != Resolving {
		t.Fatalf("new name: due %v, state %v; want due, resolving", n.Due(t0), n.State())
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		var changed bool
		switch {
		case s.err != nil:
			changed = n.Fail(now, s.err)
		case s.addrs != nil:
			changed = n.Answer(now, s.addrs, s.ttl)
		default:
			changed = n.Tick(now)
		}
		if changed != s.changed || n.State() != s.state || n.Addr() != s.addr || n.Next() != t0.Add(s.next) {
			t.Fatalf("step %d at %v: changed=%v state=%v addr=%v next=%v; want %v %v %v %v",
				i, s.at, changed, n.State(), n.Addr(), n.Next().Sub(t0), s.changed, s.state, s.addr, s.next)
		}
	}
}

func TestTTLBoundsAndRefreshBeforeExpiry(t *testing.T) {
	run(t, []step{
		// TTL 100 s: refreshed at 75 s.
		{at: 0, addrs: []netip.Addr{ip1}, ttl: 100 * time.Second, changed: true, state: Resolved, addr: ip1, next: 75 * time.Second},
		// TTL 0 is raised to MinTTL (5 s): refreshed 3.75 s later.
		{at: 75 * time.Second, addrs: []netip.Addr{ip1}, ttl: 0, state: Resolved, addr: ip1, next: 75*time.Second + 3750*time.Millisecond},
		// A day is lowered to MaxTTL (1 h).
		{at: 80 * time.Second, addrs: []netip.Addr{ip1}, ttl: 24 * time.Hour, state: Resolved, addr: ip1, next: 80*time.Second + 45*time.Minute},
	})
}

func TestAddressInUseKeptWhileInAnswer(t *testing.T) {
	run(t, []step{
		{at: 0, addrs: []netip.Addr{ip1, ip2}, ttl: 20 * time.Second, changed: true, state: Resolved, addr: ip1, next: 15 * time.Second},
		// Rotated order: ip1 is still there, it stays.
		{at: 15 * time.Second, addrs: []netip.Addr{ip2, ip1}, ttl: 20 * time.Second, state: Resolved, addr: ip1, next: 30 * time.Second},
		// ip1 gone: the first of the new answer.
		{at: 30 * time.Second, addrs: []netip.Addr{ip3, ip2}, ttl: 20 * time.Second, changed: true, state: Resolved, addr: ip3, next: 45 * time.Second},
	})
}

func TestFailuresBackOffAndGraceKeepsLastGood(t *testing.T) {
	run(t, []step{
		{at: 0, addrs: []netip.Addr{ip1}, ttl: 20 * time.Second, changed: true, state: Resolved, addr: ip1, next: 15 * time.Second},
		// Expires at 20 s, grace until 80 s. Backoff 1, 2, 4, 8, 8 s.
		{at: 15 * time.Second, err: errSF, changed: true, state: Stale, addr: ip1, next: 16 * time.Second},
		{at: 16 * time.Second, err: errSF, state: Stale, addr: ip1, next: 18 * time.Second},
		{at: 18 * time.Second, err: errSF, state: Stale, addr: ip1, next: 22 * time.Second},
		{at: 22 * time.Second, err: errSF, state: Stale, addr: ip1, next: 30 * time.Second},
		{at: 30 * time.Second, err: errSF, state: Stale, addr: ip1, next: 38 * time.Second},
		{at: 38 * time.Second, err: errSF, state: Stale, addr: ip1, next: 46 * time.Second},
		// Next() is the end of grace when it comes before the next lookup.
		{at: 75 * time.Second, err: errSF, state: Stale, addr: ip1, next: 80 * time.Second},
		// Before the grace ends, Tick changes nothing.
		{at: 79 * time.Second, state: Stale, addr: ip1, next: 80 * time.Second},
		{at: 80 * time.Second, changed: true, state: Unresolved, next: 83 * time.Second},
		// Recovery: a new answer, backoff reset.
		{at: 83 * time.Second, addrs: []netip.Addr{ip2}, ttl: 10 * time.Second, changed: true, state: Resolved, addr: ip2, next: 90500 * time.Millisecond},
		{at: 90500 * time.Millisecond, err: errSF, changed: true, state: Stale, addr: ip2, next: 91500 * time.Millisecond},
	})
}

func TestFirstLookupFailsIsUnresolved(t *testing.T) {
	run(t, []step{
		{at: 0, err: errSF, changed: true, state: Unresolved, next: time.Second},
		// An empty answer is a failure too.
		{at: time.Second, addrs: []netip.Addr{}, state: Unresolved, next: 3 * time.Second},
		{at: 3 * time.Second, addrs: []netip.Addr{ip1}, ttl: 8 * time.Second, changed: true, state: Resolved, addr: ip1, next: 9 * time.Second},
	})
}

func TestErrKept(t *testing.T) {
	n := New(set)
	n.Fail(t0, errSF)
	if !errors.Is(n.Err(), errSF) {
		t.Fatalf("Err = %v, want %v", n.Err(), errSF)
	}
	n.Answer(t0, nil, 0)
	if !errors.Is(n.Err(), ErrNoAddress) {
		t.Fatalf("Err = %v, want %v", n.Err(), ErrNoAddress)
	}
	n.Answer(t0, []netip.Addr{ip1}, 0)
	if n.Err() != nil {
		t.Fatalf("Err after an answer = %v, want nil", n.Err())
	}
}
