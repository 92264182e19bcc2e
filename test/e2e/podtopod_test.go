package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestE2EPodToPodTUN: two TUN relays; ping and TCP pod to pod both ways,
// over the direct path, through the relays.
func TestE2EPodToPodTUN(t *testing.T) {
	requirePing(t)
	top := NewTopology(t, Options{})
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)

	// The kernel sends pod traffic into the relay: table 1900, dev relay0.
	route := top.A.NS.Run(t, "ip", "route", "get", top.B.PodIP, "from", top.A.PodIP, "iif", podIf(t, top.A))
	if !strings.Contains(route, "dev relay0") || !strings.Contains(route, "table 1900") {
		t.Fatalf("provider-a routes pod B's address elsewhere than relay0/table 1900: %s", route)
	}
	before, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}

	startEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.A.PodIP, echoPort))
	startEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort))
	mustPing(t, top.A.Pod, top.B.PodIP, 10)
	mustPing(t, top.B.Pod, top.A.PodIP, 10)
	mustPing(t, top.A.Pod, bOverlay, 3) // the relay itself answers
	mustEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort), 1<<20)
	mustEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.A.PodIP, echoPort), 1<<20)

	after := ra.WaitActive("direct", 5*time.Second)
	// 2 MiB of echo crossed the relay each way; keepalives and probes are
	// far smaller.
	if d := after.TxBytes - before.TxBytes; d < 2<<20 {
		t.Errorf("provider-a's relay sent %d bytes to provider-b during the test, want at least 2 MiB", d)
	}
	if d := after.RxBytes - before.RxBytes; d < 2<<20 {
		t.Errorf("provider-a's relay received %d bytes from provider-b during the test, want at least 2 MiB", d)
	}
	t.Logf("provider-a peer provider-b: active %s, rx %d tx %d bytes", after.ActivePath, after.RxBytes, after.TxBytes)
	for _, p := range after.Paths {
		t.Logf("  path %s: %s rtt %.3f ms jitter %.3f ms loss %.2f", p.Name, p.State, p.RTTMs, p.JitterMs, p.Loss)
	}
	rb.Stop()
	ra.Stop()
}

// podIf returns the provider's interface toward its pod (or pod router).
func podIf(t *testing.T, s *Side) string {
	t.Helper()
	out := s.NS.Run(t, "ip", "-o", "route", "get", s.PodIP)
	f := strings.Fields(out)
	for i := range f {
		if f[i] == "dev" && i+1 < len(f) {
			return f[i+1]
		}
	}
	t.Fatalf("no dev in %q", out)
	return ""
}
