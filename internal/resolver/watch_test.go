package resolver

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/refresh"
)

// watchBed runs a Watcher against a real test server with short TTLs.
type watchBed struct {
	srv     *testServer
	w       *Watcher
	changes chan Result
	mu      sync.Mutex
	results map[string]int
}

func newWatchBed(t *testing.T) *watchBed {
	t.Helper()
	b := &watchBed{srv: newTestServer(t), changes: make(chan Result, 64), results: map[string]int{}}
	s := config.DefaultDNS()
	s.Family = config.FamilyIPv4
	s.Servers = []netip.AddrPort{b.srv.addr}
	// Well below what config allows, so the test runs quickly; the
	// schedule's arithmetic is internal/core/refresh's, tested there.
	s.MinTTL, s.MaxTTL = 20*time.Millisecond, 100*time.Millisecond
	s.Grace = 300 * time.Millisecond
	s.RetryMin, s.RetryMax = 20*time.Millisecond, 50*time.Millisecond
	s.Timeout = 200 * time.Millisecond
	c := NewClient(s, WithResolvConf("/nonexistent"), WithHosts("/nonexistent"))
	b.w = NewWatcher(s, c, WatcherOptions{
		OnChange: func(_ context.Context, r Result) { b.changes <- r },
		OnLookup: func(res string) { b.mu.Lock(); b.results[res]++; b.mu.Unlock() },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { b.w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

// next waits for the next change report (the bound only stops a hung test).
func (b *watchBed) next(t *testing.T) Result {
	t.Helper()
	select {
	case r := <-b.changes:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no change reported")
		return Result{}
	}
}

func (b *watchBed) count(res string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.results[res]
}

// TestWatcherFollowsChangesAndFailures walks one name through a changed
// answer, SERVFAIL (kept in grace, then unresolved) and recovery.
func TestWatcherFollowsChangesAndFailures(t *testing.T) {
	b := newWatchBed(t)
	const host = "lb.example."
	b.srv.set(host, dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 1})
	r := b.w.Resolve(context.Background(), host)
	if r.State != refresh.Resolved || r.Addr != v4a {
		t.Fatalf("Resolve = %+v, want resolved to %v", r, v4a)
	}
	if r := b.next(t); r.Addr != v4a {
		t.Fatalf("first report %+v", r)
	}

	// A changed answer moves the name (rotation is refresh's test).
	b.srv.set(host, dns.TypeA, record{addrs: []netip.Addr{v4b}, ttl: 1})
	if r := b.next(t); r.State != refresh.Resolved || r.Addr != v4b {
		t.Fatalf("after the answer changed: %+v, want resolved to %v", r, v4b)
	}

	b.srv.set(host, dns.TypeA, record{rcode: dns.RcodeServerFailure})
	if r := b.next(t); r.State != refresh.Stale || r.Addr != v4b || r.Err == nil {
		t.Fatalf("after SERVFAIL: %+v, want stale on %v with the error", r, v4b)
	}
	if r := b.next(t); r.State != refresh.Unresolved || r.Addr.IsValid() {
		t.Fatalf("after the grace period: %+v, want unresolved", r)
	}
	b.srv.set(host, dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 1})
	if r := b.next(t); r.State != refresh.Resolved || r.Addr != v4a {
		t.Fatalf("after recovery: %+v, want resolved to %v", r, v4a)
	}
	if b.count(ResultOK) < 3 || b.count(ResultServer) < 1 {
		t.Fatalf("lookup results counted: %v", b.results)
	}
	if got, ok := b.w.Get(host); !ok || got.Addr != v4a {
		t.Fatalf("Get = %+v, %v", got, ok)
	}
	b.w.Retain(nil)
	if _, ok := b.w.Get(host); ok {
		t.Fatal("Retain(nil) kept the name")
	}
}

// TestWatcherTimeoutKeepsAddress: a resolver that stops answering leaves
// the address in place (stale) with a timeout error.
func TestWatcherTimeoutKeepsAddress(t *testing.T) {
	b := newWatchBed(t)
	const host = "quiet.example."
	b.srv.set(host, dns.TypeA, record{addrs: []netip.Addr{v4a}, ttl: 1})
	b.w.Resolve(context.Background(), host)
	b.next(t)
	b.srv.set(host, dns.TypeA, record{drop: true})
	r := b.next(t)
	if r.State != refresh.Stale || r.Addr != v4a || ResultOf(r.Err) != ResultTimeout {
		t.Fatalf("after a timeout: %+v (result %s), want stale on %v, timeout", r, ResultOf(r.Err), v4a)
	}
}
