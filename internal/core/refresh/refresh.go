// Package refresh decides when a host name is looked up again and which
// address it stands for meanwhile: the answer's TTL bounded by settings,
// a lookup before the answer expires, the address in use kept while the
// answer still holds it, failed lookups retried with exponential backoff,
// and the last good address kept for a grace period after it expired.
//
// It is a pure state machine: time comes in as `now`, answers and failures
// are fed by the caller (internal/resolver does the lookups), and nothing here
// sleeps, reads a clock or touches the network.
package refresh

import (
	"errors"
	"net/netip"
	"slices"
	"time"
)

// Settings shape one name's refresh schedule.
type Settings struct {
	// MinTTL and MaxTTL bound an answer's TTL: a 0 s TTL would look the
	// name up in a loop, a day-long one would miss a moved load balancer.
	MinTTL, MaxTTL time.Duration
	// Grace is how long the last good address is kept after its (bounded)
	// TTL ran out while lookups fail.
	Grace time.Duration
	// RetryMin is the wait after the first failed lookup; it doubles with
	// every further failure up to RetryMax.
	RetryMin, RetryMax time.Duration
}

// RefreshFraction is how far into an answer's TTL the name is looked up
// again: at three quarters, a slow or once-failing lookup still lands
// before the answer expires.
const RefreshFraction = 0.75

// State is where a name stands.
type State int

const (
	// Resolving: no answer yet, the first lookup is due or in flight.
	Resolving State = iota
	// Resolved: Addr is from an answer whose TTL has not run out, or from
	// an expired one while the refresh is in flight.
	Resolved
	// Stale: lookups fail; Addr is the last good address, kept until the
	// grace period ends.
	Stale
	// Unresolved: lookups fail and there is no address (never resolved,
	// or the grace period ended).
	Unresolved
)

func (s State) String() string {
	switch s {
	case Resolving:
		return "resolving"
	case Resolved:
		return "resolved"
	case Stale:
		return "stale"
	case Unresolved:
		return "unresolved"
	}
	return "invalid"
}

// ErrNoAddress is the failure of an answer that holds no usable address.
var ErrNoAddress = errors.New("no address in the answer")

// Name is the refresh state of one host name. The zero value is not
// usable: build it with New.
type Name struct {
	s        Settings
	state    State
	addr     netip.Addr
	err      error
	next     time.Time // the next lookup is due then
	expires  time.Time // the current answer's bounded TTL runs out then
	failures int       // consecutive failed lookups
}

// New returns a name whose first lookup is due at once.
func New(s Settings) *Name { return &Name{s: s} }

// State, Addr and Err describe the name now: Addr is valid in Resolved and
// Stale, Err is the last lookup's failure (nil after a success).
func (n *Name) State() State     { return n.state }
func (n *Name) Addr() netip.Addr { return n.addr }
func (n *Name) Err() error       { return n.err }

// Due reports whether a lookup is due at now.
func (n *Name) Due(now time.Time) bool { return !now.Before(n.next) }

// Next is when the name needs attention: its next lookup, or the end of
// its grace period when that comes first.
func (n *Name) Next() time.Time {
	if n.state == Stale {
		if end := n.expires.Add(n.s.Grace); end.Before(n.next) {
			return end
		}
	}
	return n.next
}

// Answer feeds a successful lookup at now: addrs in order of preference
// and the answer's TTL. The address in use stays while addrs holds it
// (load balancers rotate their answers); otherwise the first one is taken.
// An empty answer counts as a failure (ErrNoAddress). It reports whether
// the name's address or state changed.
func (n *Name) Answer(now time.Time, addrs []netip.Addr, ttl time.Duration) bool {
	if len(addrs) == 0 {
		return n.Fail(now, ErrNoAddress)
	}
	ttl = min(max(ttl, n.s.MinTTL), n.s.MaxTTL)
	before := n.snapshot()
	if !n.addr.IsValid() || !slices.Contains(addrs, n.addr) {
		n.addr = addrs[0]
	}
	n.state, n.err, n.failures = Resolved, nil, 0
	n.expires = now.Add(ttl)
	n.next = now.Add(time.Duration(float64(ttl) * RefreshFraction))
	return before != n.snapshot()
}

// Fail feeds a failed lookup at now. The next lookup backs off; the
// address is kept until the grace period after its expiry ends. It
// reports whether the name's address or state changed.
func (n *Name) Fail(now time.Time, err error) bool {
	before := n.snapshot()
	n.failures++
	n.err = err
	n.next = now.Add(n.backoff())
	n.settle(now)
	return before != n.snapshot()
}

// Tick moves the name to Unresolved when its grace period has ended at
// now. It reports whether that changed anything.
func (n *Name) Tick(now time.Time) bool {
	before := n.snapshot()
	n.settle(now)
	return before != n.snapshot()
}

// settle applies the failure rules at now: a failing name keeps its
// address until expiry plus grace.
func (n *Name) settle(now time.Time) {
	if n.failures == 0 {
		return
	}
	switch {
	case n.addr.IsValid() && now.Before(n.expires.Add(n.s.Grace)):
		n.state = Stale
	default:
		n.state, n.addr = Unresolved, netip.Addr{}
	}
}

// backoff is the wait after the n-th consecutive failure.
func (n *Name) backoff() time.Duration {
	d := n.s.RetryMin
	for i := 1; i < n.failures && d < n.s.RetryMax; i++ {
		d *= 2
	}
	return min(d, n.s.RetryMax)
}

type snapshot struct {
	state State
	addr  netip.Addr
}

func (n *Name) snapshot() snapshot { return snapshot{n.state, n.addr} }
