package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2ECleanup: SIGTERM leaves nothing behind; after kill -9 a restarted
// relay cleans up the leftovers and works.
func TestE2ECleanup(t *testing.T) {
	requirePing(t)
	top := NewTopology(t, Options{})
	if left := leftovers(t, top.A); len(left) > 0 {
		t.Fatalf("fresh namespace not clean: %v", left)
	}
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{})
	rb.Start()
	ra.Start()
	ra.WaitActive("direct", 15*time.Second)
	mustPing(t, top.A.Pod, top.B.PodIP, 3)
	running := rules(t, top.A)
	if running == "" {
		t.Fatal("no policy rule at priority 1900 while the relay runs")
	}
	if routes := table(t, top.A); !strings.Contains(routes, top.B.PodCIDR) {
		t.Fatalf("table 1900 lacks %s while the relay runs:\n%s", top.B.PodCIDR, routes)
	}

	ra.Stop()
	if left := leftovers(t, top.A); len(left) > 0 {
		t.Fatalf("after SIGTERM, provider-a still has:\n%s", strings.Join(left, "\n"))
	}
	// With A's relay gone, B's relay finds A unreachable and withdraws its
	// routes too; then the host routes (through the consumer) carry the
	// pods' traffic both ways.
	waitFor(t, 10*time.Second, "provider-b finds provider-a unreachable", func() (bool, string) {
		ps, err := rb.PeerStatus()
		if err != nil {
			return false, err.Error()
		}
		return !ps.Reachable, "active " + ps.ActivePath
	})
	mustPing(t, top.A.Pod, top.B.PodIP, 3)

	// A crash: the kernel removes the TUN device with its routes, the
	// policy rules stay behind.
	ra.Start()
	ra.WaitActive("direct", 15*time.Second)
	if err := ra.Proc.Stop(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	crashed := rules(t, top.A)
	t.Logf("left after kill -9:\n%s", strings.Join(leftovers(t, top.A), "\n"))

	ra.Start()
	// A restarted relay is reachable again at once (new epoch, immediate
	// handshake), not after WireGuard's timers: measure when pod B gets
	// through to pod A (a figure for the report; the bound is generous).
	restarted := time.Now()
	waitFor(t, 10*time.Second, "pod B reaches pod A through the restarted relay", func() (bool, string) {
		out, err := ping(top.B.Pod, top.A.PodIP, 1, "-W", "1")
		return err == nil, out
	})
	t.Logf("pod B reached pod A %v after the restarted relay's admin server answered",
		time.Since(restarted).Round(time.Millisecond))
	ra.WaitActive("direct", 15*time.Second)
	if got := rules(t, top.A); got != running {
		t.Errorf("rules after a restart over leftovers:\n%s\nwant the same as a fresh start:\n%s\n(left by the crash:\n%s)", got, running, crashed)
	}
	mustPing(t, top.A.Pod, top.B.PodIP, 5)
	mustPing(t, top.B.Pod, top.A.PodIP, 5)
	startEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort))
	mustEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort), 256<<10)

	ra.Stop()
	rb.Stop()
	for _, s := range []*Side{top.A, top.B} {
		if left := leftovers(t, s); len(left) > 0 {
			t.Errorf("after SIGTERM, %s still has:\n%s", s.Name, strings.Join(left, "\n"))
		}
	}
}
