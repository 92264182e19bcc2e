package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// pathKey names one path as seen from one relay.
type pathKey struct{ from, peer, path string }

// pathChanges returns the LastChange of every path of from to each peer.
func (b *bed) pathChanges(from string, peers ...string) map[pathKey]time.Time {
	b.t.Helper()
	out := map[pathKey]time.Time{}
	for _, peer := range peers {
		p, ok := b.peer(from, peer)
		if !ok {
			b.t.Fatalf("%s does not list %s", from, peer)
		}
		for _, path := range p.Paths {
			out[pathKey{from, peer, path.Name}] = path.LastChange.Time
		}
	}
	return out
}

// waitAllUp waits until every path of from to each peer is up.
func (b *bed) waitAllUp(from string, peers ...string) {
	b.t.Helper()
	for _, peer := range peers {
		waitFor(b.t, waitTimeout, fmt.Sprintf("every path of %s to %s up", from, peer), func() bool {
			p, ok := b.peer(from, peer)
			if !ok || len(p.Paths) == 0 {
				return false
			}
			for _, path := range p.Paths {
				if path.State != status.PathUp {
					return false
				}
			}
			return true
		})
	}
}

// waitAnswers waits until from has had n more probes answered on every
// path to peer (samples of relay_path_rtt_seconds) than when called: a span
// of the probe schedule measured in answers, not in wall-clock time. Probes
// the peer drops as replays are never answered, so this never completes
// if the pings broke the peer's replay window.
func (b *bed) waitAnswers(from, peer string, paths []string, n float64) {
	b.t.Helper()
	for _, path := range paths {
		labels := map[string]string{"peer": peer, "path": path}
		start := b.counter(from, "relay_path_rtt_seconds", labels)
		waitFor(b.t, waitTimeout, fmt.Sprintf("%s to get %v more answers on %s from %s", from, n, path, peer), func() bool {
			return b.counter(from, "relay_path_rtt_seconds", labels) >= start+n
		})
	}
}

// stableProbes is how many probes every path must have answered after the
// pings: more than two detect times of any path (detectMultiplier is 3).
const stableProbes = 7

// checkStable checks that, after the pings, the peers answer stableProbes
// more probes on every path between A and B in both directions, and that
// every path is up then. A path that changed state meanwhile is logged, not
// failed: on a loaded machine a path may miss a detect time for reasons
// that have nothing to do with pings; a broken replay window instead drops
// every later probe, and no answer ever comes.
func (b *bed) checkStable(before map[pathKey]time.Time) {
	b.t.Helper()
	paths := []string{"direct", "consumer"}
	b.waitAnswers(relayA, relayB, paths, stableProbes)
	b.waitAnswers(relayB, relayA, paths, stableProbes)
	if got := b.counter(relayB, "relay_probes_rejected_total", nil); got != 0 {
		b.t.Logf("B rejected %v probes", got)
	}
	after := b.upSnapshot()
	for k, t0 := range before {
		if t1, ok := after[k]; !ok || !t1.Equal(t0) {
			b.t.Logf("%s: path %s to %s changed state at %v (was %v)", k.from, k.path, k.peer, t1, t0)
		}
	}
}

func (b *bed) upSnapshot() map[pathKey]time.Time {
	b.t.Helper()
	b.waitAllUp(relayA, relayB, relayC)
	b.waitAllUp(relayB, relayA, relayC)
	before := b.pathChanges(relayA, relayB, relayC)
	for k, v := range b.pathChanges(relayB, relayA, relayC) {
		before[k] = v
	}
	return before
}

// TestPingKeepsPathsUp runs `relay ping` from A to B and from B to A, several
// at once, and checks that every path of both relays keeps its probes
// answered and stays up, over more than two detect times of each path
// afterwards.
// Pings and probes share one nonce counter: nonces from a second counter
// (say, with bit 63 set) would move the peer's replay window 2^63 ahead
// of the probes after one ping, and every path would go down for good.
func TestPingKeepsPathsUp(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 3 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	before := b.upSnapshot()

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, pair := range [][2]string{{relayA, relayB}, {relayB, relayA}, {relayA, relayC}} {
		for range 3 {
			wg.Go(func() {
				res, err := b.agent(pair[0]).Ping(ctx, pair[1])
				if err != nil {
					t.Errorf("ping %s from %s: %v", pair[1], pair[0], err)
					return
				}
				// A ping that times out on a loaded machine is logged:
				// what this test guards is the probes after the pings
				// (checkStable), which a broken replay window stops for
				// good. Every path of a ping failing is still an error.
				ok := 0
				for _, r := range res {
					if r.OK {
						ok++
					} else {
						t.Logf("ping %s from %s via %s: %+v", pair[1], pair[0], r.Path, r)
					}
				}
				if ok == 0 {
					t.Errorf("ping %s from %s: no path answered: %+v", pair[1], pair[0], res)
				}
			})
		}
	}
	wg.Wait()
	b.checkStable(before)
	if t.Failed() {
		return
	}
	// And once more, now that the windows have seen pings. A context of
	// its own: checkStable waits for answers at an idle peer's slow rate.
	ctx2, cancel2 := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel2()
	if _, err := b.agent(relayA).Ping(ctx2, relayB); err != nil {
		t.Fatalf("second ping: %v", err)
	}
	b.checkStable(before)
}

// TestPingDuringPeerRestart pings B from A without pause while B restarts
// (a new boot epoch, a fresh replay window on B), then checks that all
// paths come up and stay up while A keeps pinging.
func TestPingDuringPeerRestart(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 3 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	b.upSnapshot()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = b.agent(relayA).Ping(ctx, relayB) // fails while B is down
		}
	})
	b.stop(relayB)
	b.start(relayB)
	b.waitSessions(relayA, relayB)
	before := b.upSnapshot()
	b.checkStable(before)
}
