package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestRedundantDuplicateCopiesToSecondPath: with redundancy: duplicate,
// A copies its traffic for B to the consumer path while direct carries it,
// and when direct is cut the stream goes on.
func TestRedundantDuplicateCopiesToSecondPath(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 5 * time.Millisecond, Consumer: 15 * time.Millisecond, Health: "{redundancy: duplicate}"})
	b.waitActive(relayA, relayB, "direct")
	s := b.openStream()
	copies := func() float64 {
		return b.counter(relayA, "relay_redundant_packets_total", map[string]string{"peer": relayB})
	}
	waitFor(t, waitTimeout, "A to copy its traffic for B", func() bool { return copies() > 0 })
	n := s.count()
	b.direct.Cut(true)
	s.waitCount(t, n+50, waitTimeout)
	b.waitActive(relayA, relayB, "consumer")
}

// TestRedundantAutoCopiesWhenActivePathFails: with redundancy: auto, a cut
// of the active path makes A copy the UDP datagrams it sends to B to the
// other path while the cut is being detected (a TCP flow would stop
// sending once its window is unacknowledged, so UDP shows it).
//
// detectMultiplier 10 widens the detection, so that a loaded machine cannot
// skip the rounds in which the path is suspect (no evidence for half its
// detect time) and go straight to declaring it down.
func TestRedundantAutoCopiesWhenActivePathFails(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 5 * time.Millisecond, Consumer: 15 * time.Millisecond, Health: "{redundancy: auto, detectMultiplier: 10}"})
	b.waitActive(relayA, relayB, "direct")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "udp", pod(2, podPort).String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _ = c.Write([]byte("redundant?"))
			}
		}
	})
	copies := func() float64 {
		return b.counter(relayA, "relay_redundant_packets_total", map[string]string{"peer": relayB})
	}
	before := copies()
	b.direct.Cut(true)
	waitFor(t, waitTimeout, "A to copy its datagrams while direct's cut is detected", func() bool { return copies() > before })
	b.waitActive(relayA, relayB, "consumer")
}
