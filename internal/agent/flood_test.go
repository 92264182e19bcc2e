package agent_test

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// floodSource is the address the forged probes come from: another loopback
// address than the one every genuine datagram of the bed comes from
// (127.0.0.1), as a flood comes from a stranger's address: it is held to
// the per-source budget. (A flood from a peer path's exact address is
// verified instead: TestForgedProbeFloodFromPathAddressKeepsPathsUp.)
var floodSource = netip.MustParseAddr("127.0.0.2")

// forgedProbes returns requests that look like provider-a's (the right
// magic, version, kind and sender id, so they pass every check before the
// MAC) but carry garbage MACs, with varied nonces.
func forgedProbes(b *bed, n int) [][]byte {
	b.t.Helper()
	id := health.IDOf(b.f.Relay(relayA).Key.PublicKey())
	out := make([][]byte, n)
	for i := range out {
		var buf [health.ProbeSize]byte
		health.Marshal(&buf, &health.Message{Kind: health.KindRequest, Nonce: uint64(1e9 + i), Epoch: 42, Sender: id})
		for j := health.ProbeSize - 16; j < health.ProbeSize; j++ {
			buf[j] = byte(i*31 + j)
		}
		if !health.IsProbe(buf[:]) {
			b.t.Fatal("forged datagram is not taken for a probe")
		}
		out[i] = buf[:]
	}
	return out
}

// floodBatch forged probes are sent per millisecond (or per tick of the
// sleep, if coarser): at most 3,000 per second, 6 times the per-source
// budget, yet within what a relay reads from its socket even under the race
// detector on a loaded machine. A flood beyond the receive capacity of the
// socket has the kernel drop genuine datagrams along with forged ones
// before the relay sees any (tried: 10,000 per second under -race on a
// busy 2-core machine made paths flap): no budget in the relay can help
// with that, it is a matter of capacity and of filtering upstream.
const floodBatch = 3

// flood sends the forged probes to relay to until ctx ends.
func (b *bed) flood(ctx context.Context, wg *sync.WaitGroup, to string) {
	b.t.Helper()
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(floodSource, 0)))
	if err != nil {
		b.t.Fatalf("flood socket on %v: %v", floodSource, err)
	}
	dst := net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), b.f.Relay(to).Port))
	pkts := forgedProbes(b, 64)
	wg.Go(func() {
		defer c.Close()
		for i := 0; ctx.Err() == nil; i++ {
			_, _ = c.WriteToUDP(pkts[i%len(pkts)], dst)
			if i%floodBatch == floodBatch-1 {
				time.Sleep(time.Millisecond) // real: paces the flood so the kernel's socket buffers keep up
			}
		}
	})
}

// TestForgedProbeFloodKeepsPathsUp floods provider-b, from one source
// address, with forged probes that name provider-a as their sender (so
// every one reaches the MAC check unless the budget stops it first). While
// the flood runs, the genuine probes of A and B must keep being answered on
// every path, both ways, and every path must stay up; B must have dropped
// forged probes for exceeding the per-source budget
// (relay_probes_dropped_total{reason="budget"}), and rejected those it
// checked (relay_probes_rejected_total). As in the ping tests, a path that
// changes state meanwhile is logged, not failed (a loaded machine does
// that to any path, the flood's or not); a flood that starved the genuine
// probes would leave them unanswered, and the test would time out.
func TestForgedProbeFloodKeepsPathsUp(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 3 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	before := b.upSnapshot()
	budget := map[string]string{"reason": "budget"}
	dropped0 := b.counter(relayB, "relay_probes_dropped_total", budget)
	rejected0 := b.counter(relayB, "relay_probes_rejected_total", nil)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	b.flood(ctx, &wg, relayB)

	waitFor(t, waitTimeout, "B to drop forged probes over the per-source budget", func() bool {
		return b.counter(relayB, "relay_probes_dropped_total", budget) > dropped0
	})
	// The genuine probes keep their paths up through the flood: answered
	// on every path both ways, no path down (checkStable).
	b.checkStable(before)
	if b.counter(relayB, "relay_probes_rejected_total", nil) <= rejected0 {
		t.Error("B rejected none of the forged probes: they never reached the MAC check")
	}
	cancel()
	wg.Wait()
	t.Logf("B dropped %v forged probes over budget, rejected %v",
		b.counter(relayB, "relay_probes_dropped_total", budget)-dropped0,
		b.counter(relayB, "relay_probes_rejected_total", nil)-rejected0)
}
