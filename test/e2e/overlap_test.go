package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// TestE2EOverlappingCIDRs: both pods are 10.244.1.10; A sees B's pods as
// 10.72.0.0/16 and B sees A's as 10.71.0.0/16. TCP and ping both ways, and
// an ICMP "fragmentation needed" from a small-MTU router behind B reaches
// pod A with translated addresses.
func TestE2EOverlappingCIDRs(t *testing.T) {
	requirePing(t)
	const hopMTU = 1000
	top := NewTopology(t, Options{Overlapping: true, PodHopMTU: hopMTU})
	ra, rb := top.Relays(t, RelaySpec{Overlap: true}, RelaySpec{Overlap: true})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)

	// The echo server answers with the peer address it saw: B's pod must
	// see A's pod as 10.71.1.10.
	startEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.A.PodIP, echoPort))
	startEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort))
	mustPing(t, top.A.Pod, top.A.SeesPeerPodIP, 5) // 10.72.1.10
	mustPing(t, top.B.Pod, top.B.SeesPeerPodIP, 5) // 10.71.1.10
	mustEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.A.SeesPeerPodIP, echoPort), 256<<10)
	mustEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.SeesPeerPodIP, echoPort), 256<<10)
	startWhoami(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, whoamiPort))
	if got := whoami(t, top.A.Pod, fmt.Sprintf("%s:%d", top.A.SeesPeerPodIP, whoamiPort)); got != top.B.SeesPeerPodIP {
		t.Errorf("pod B saw pod A's connection from %s, want %s (A's pod as B sees it)", got, top.B.SeesPeerPodIP)
	}

	// Path MTU discovery across the translation: a 1228-byte DF packet fits
	// relay0 (1280) but not the 1000-byte hop in front of pod B. The router
	// there (192.168.99.2, outside B's exports) answers "fragmentation
	// needed"; B's relay rewrites that source to its own address and A's
	// relay translates the quoted header back, so pod A's kernel learns the
	// path MTU for 10.72.1.10.
	out, _ := ping(top.A.Pod, top.A.SeesPeerPodIP, 3, "-M", "do", "-s", "1200")
	t.Logf("ping -M do -s 1200 %s from pod A:\n%s", top.A.SeesPeerPodIP, out)
	wantMTU := regexp.MustCompile(fmt.Sprintf(`(?i)(frag needed and DF set \(mtu = %d\)|message too long, mtu=%d)`, hopMTU, hopMTU))
	cache := top.A.Pod.Run(t, "ip", "route", "get", top.A.SeesPeerPodIP)
	t.Logf("pod A's route cache: %s", strings.TrimSpace(cache))
	if !wantMTU.MatchString(out) && !strings.Contains(cache, fmt.Sprintf("mtu %d", hopMTU)) {
		t.Errorf("pod A never learned the path MTU %d to %s: ping said\n%s\nroute cache: %s", hopMTU, top.A.SeesPeerPodIP, out, cache)
	}
	if m := regexp.MustCompile(`From (\S+) icmp_seq=\d+ Frag needed`).FindStringSubmatch(out); m != nil && m[1] != bOverlay {
		t.Errorf("frag-needed came from %s, want B's relay %s (the ICMP source rewrite)", m[1], bOverlay)
	}
	// With the learned MTU, a DF ping that fits goes through.
	mustPingSized(t, top.A.Pod, top.A.SeesPeerPodIP, 972)
	ra.Stop()
	rb.Stop()
}

// mustPingSized pings with DF set and the given payload size.
func mustPingSized(t *testing.T, n *netns.NS, dst string, size int) {
	t.Helper()
	if _, err := ping(n, dst, 3, "-M", "do", "-s", fmt.Sprint(size)); err != nil {
		t.Fatalf("DF ping of %d bytes to %s: %v", size, dst, err)
	}
	t.Logf("DF ping, %d-byte payload, to %s: answered", size, dst)
}
