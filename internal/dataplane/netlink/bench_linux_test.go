//go:build linux

package netlink_test

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

// TestRouteManagerConcurrentUse flips peers from several goroutines while
// another calls EnsureRules, as the agent's failover loop and repair tick
// may; under -race this checks the locking, and the end state must be
// exactly the last writes.
func TestRouteManagerConcurrentUse(t *testing.T) {
	e := rtNewEnv(t)
	const peers, flips = 4, 20
	var wg sync.WaitGroup
	errs := make(chan error, peers*flips+flips)
	for p := range peers {
		wg.Go(func() {
			name := fmt.Sprintf("p%d", p)
			prefix := []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(p + 1), 0, 0}), 16)}
			for i := range flips {
				// Odd counts end reachable: the last write of every peer is "up".
				if err := e.m.SetPeer(name, prefix, i%2 == 1); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() {
		for range flips {
			if _, err := e.m.EnsureRules(); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.ensure(t, false)
	want := []string{"10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16", "10.4.0.0/16"}
	if got := e.routes(t); !slices.Equal(got, want) {
		t.Errorf("routes = %q, want %q", got, want)
	}
}

// BenchmarkSetPeerFlip measures a failover's kernel side: withdrawing a
// peer's routes (4 prefixes, both families) and installing them again.
func BenchmarkSetPeerFlip(b *testing.B) {
	e := rtNewEnv(b)
	prefixes := rtPrefixes("10.1.0.0/16", "10.2.0.0/16", "fd00:1::/64", "fd00:2::/64")
	for i := 0; b.Loop(); i++ {
		if err := e.m.SetPeer("a", prefixes, i%2 == 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnsureRulesClean measures the periodic repair check when there is
// nothing to repair (two rule dumps, one route dump, one address dump).
func BenchmarkEnsureRulesClean(b *testing.B) {
	e := rtNewEnv(b)
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16", "fd00:1::/64"), true); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if repaired, err := e.m.EnsureRules(); err != nil || repaired {
			b.Fatalf("EnsureRules = %v, %v", repaired, err)
		}
	}
}
