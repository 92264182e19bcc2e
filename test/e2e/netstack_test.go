package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestE2ENetstackPeeredWithTUN: provider-b's relay runs in netstack mode
// (no TUN, no routes) and exports B's pod CIDR; its userspace stack
// forwards inbound TCP to the real pod through the provider namespace's
// network. A pod behind A's TUN relay connects to a server in pod B, and
// B's relay answers ping on its overlay address.
func TestE2ENetstackPeeredWithTUN(t *testing.T) {
	requirePing(t)
	top := NewTopology(t, Options{})
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{Mode: "netstack"})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	rb.WaitActive("direct", 15*time.Second)
	if st, err := rb.Status(); err != nil || st.Mode != "netstack" {
		t.Fatalf("provider-b status: mode %v, err %v; want netstack", st, err)
	}
	if out, err := top.B.NS.Output("ip", "link", "show", "relay0"); err == nil {
		t.Fatalf("a netstack relay created a TUN device: %s", out)
	}

	mustPing(t, top.A.Pod, bOverlay, 5)
	startEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort))
	before, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		mustEcho(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort), 1<<20)
	}
	after, err := ra.PeerStatus()
	if err != nil {
		t.Fatal(err)
	}
	if d := after.TxBytes - before.TxBytes; d < 3<<20 {
		t.Errorf("provider-a's relay sent %d bytes to provider-b, want at least 3 MiB: the echo did not cross the relays", d)
	}
	// The netstack relay connects from the provider's own address: the pod
	// sees B's node, not A's pod.
	startWhoami(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, whoamiPort))
	seen := whoami(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, whoamiPort))
	t.Logf("pod B sees the forwarded connection from %s", seen)
	if seen == top.A.PodIP {
		t.Errorf("pod B saw %s: the connection bypassed the netstack relay", seen)
	}
	// A closed port answers with a reset (the relay connects to the
	// backend before completing the peer's handshake).
	if _, err := echoOnce(top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort+100), 1); err == nil ||
		!strings.Contains(err.Error(), "refused") {
		t.Errorf("connect to a closed port behind the netstack relay: %v, want connection refused", err)
	}
	ra.Stop()
	rb.Stop()
}
