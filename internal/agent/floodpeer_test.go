//go:build linux

package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// TestForgedProbeFloodFromPathAddressKeepsPathsUp floods provider-b with
// forged probes (provider-a's sender id, garbage MACs) sent from exactly
// the address B knows as A's direct path: the address A's genuine probes
// come from. A per-source budget would spend that address's tokens on the
// flood and drop A's genuine probes with it; instead, probes from a known
// path address are always verified. So B drops none of them for the
// budget, rejects the forged ones at the MAC check, and keeps answering
// A's genuine probes on every path, both ways.
//
// The emulated links cannot send from another's address, so the spoofer
// is a raw socket (root only), as in TestDeadPathGoesDownUnderSpoofedReplays.
func TestForgedProbeFloodFromPathAddressKeepsPathsUp(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 3 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	raw := openRawUDP(t)
	before := b.upSnapshot()
	portB := b.f.Relay(relayB).Port
	pathAddr := b.direct.Endpoint(relayB) // B's endpoint for A's direct path
	if st := b.pathStatus(relayB, relayA, "direct"); st.Endpoint != pathAddr.String() {
		t.Fatalf("B's direct path to A has endpoint %s, want %s", st.Endpoint, pathAddr)
	}
	budget := map[string]string{"reason": "budget"}
	dropped0 := b.counter(relayB, "relay_probes_dropped_total", budget)
	rejected0 := b.counter(relayB, "relay_probes_rejected_total", nil)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	pkts := forgedProbes(b, 64)
	var sendErrs int
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			if err := raw.send(pathAddr.Port(), portB, pkts[i%len(pkts)]); err != nil {
				sendErrs++
			}
			if i%floodBatch == floodBatch-1 {
				time.Sleep(time.Millisecond) // real: paces the flood so the kernel's socket buffers keep up
			}
		}
	})

	// More forged probes than the budget's burst must have been checked
	// (and rejected) before the flood can prove anything about it.
	waitFor(t, waitTimeout, "B to reject forged probes from A's path address", func() bool {
		return b.counter(relayB, "relay_probes_rejected_total", nil) > rejected0+3*health.BudgetBurst
	})
	b.checkStable(before)
	cancel()
	wg.Wait()
	if got := b.counter(relayB, "relay_probes_dropped_total", budget) - dropped0; got != 0 {
		t.Errorf("B dropped %v probes for the per-source budget during a flood from a known path address", got)
	}
	if sendErrs > 0 {
		t.Logf("%d spoofed sends failed", sendErrs)
	}
	t.Logf("B rejected %v forged probes", b.counter(relayB, "relay_probes_rejected_total", nil)-rejected0)
}
