package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestE2EWithdrawal: with both paths to B cut, A's relay withdraws B's
// routes and the pods talk over the host routes (the consumer); when a
// path comes back, so do the routes.
func TestE2EWithdrawal(t *testing.T) {
	requirePing(t)
	top := NewTopology(t, Options{})
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)
	if !strings.Contains(table(t, top.A), top.B.PodCIDR) {
		t.Fatalf("table 1900 lacks %s:\n%s", top.B.PodCIDR, table(t, top.A))
	}
	mustPing(t, top.A.Pod, top.B.PodIP, 3)

	// Cut both paths: the direct link goes down, and A loses its route to
	// B's consumer-link address (B's packets still reach A through the
	// consumer, A's answers cannot go back).
	top.CutDirect(t)
	top.CutConsumer(t, top.A)
	cut := time.Now()
	waitFor(t, 10*time.Second, "provider-a withdraws provider-b's routes", func() (bool, string) {
		tb := table(t, top.A)
		return !strings.Contains(tb, top.B.PodCIDR) && !strings.Contains(tb, bOverlay), tb
	})
	t.Logf("routes withdrawn within %v of the cut", time.Since(cut).Round(10*time.Millisecond))
	ps, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}
	if ps.Reachable || ps.ActivePath != "" {
		t.Errorf("provider-a status: reachable=%v active=%q, want unreachable with no active path", ps.Reachable, ps.ActivePath)
	}
	route := top.A.NS.Run(t, "ip", "route", "get", top.B.PodIP, "from", top.A.PodIP, "iif", podIf(t, top.A))
	if !strings.Contains(route, "via "+cA) {
		t.Errorf("with the relay's routes withdrawn, pod traffic should go via the consumer %s: %s", cA, route)
	}
	// The pods still talk, over the host routes; not through A's relay.
	// (B's relay may still see a path for a moment; wait for B to give up
	// too, so replies do not depend on it.)
	waitFor(t, 10*time.Second, "provider-b finds provider-a unreachable", func() (bool, string) {
		ps, err := rb.PeerStatus()
		if err != nil {
			return false, err.Error()
		}
		return !ps.Reachable, "active " + ps.ActivePath
	})
	before, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}
	mustPing(t, top.A.Pod, top.B.PodIP, 5)
	mustPing(t, top.B.Pod, top.A.PodIP, 5)
	after, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}
	// 10 pings of 84 bytes would be > 800 bytes of payload; handshake
	// attempts toward a dead path send at most a few 148-byte packets.
	if d := after.TxBytes - before.TxBytes; d >= 840 {
		t.Errorf("provider-a's relay sent %d bytes while withdrawn: pod traffic went into the relay", d)
	}

	// Restore the consumer path first: routes return with the first path
	// up; then the direct link.
	top.RestoreConsumer(t, top.A)
	restored := time.Now()
	ra.WaitActive("consumer", 15*time.Second)
	waitFor(t, 10*time.Second, "provider-a reinstalls provider-b's routes", func() (bool, string) {
		tb := table(t, top.A)
		return strings.Contains(tb, top.B.PodCIDR) && strings.Contains(tb, bOverlay), tb
	})
	t.Logf("routes back within %v of restoring the consumer path", time.Since(restored).Round(10*time.Millisecond))
	mustPing(t, top.A.Pod, top.B.PodIP, 5)

	top.RestoreDirect(t)
	// failbackHold (3 s) after the direct path is up again.
	ra.WaitActive("direct", 20*time.Second)
	mustPing(t, top.A.Pod, top.B.PodIP, 5)
	ra.Stop()
	rb.Stop()
}
