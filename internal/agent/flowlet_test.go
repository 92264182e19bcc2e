package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/status"
)

// TestFailbackMovesAtAFlowletBoundary: the move away from a cut path is
// made at once (what is in flight there is lost), the move back to the
// faster direct path waits for a gap in the traffic (docs/failover.md,
// "Moving to a faster path"), bounded by failover.MaxReorderGap.
func TestFailbackMovesAtAFlowletBoundary(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 20 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	gap := func() time.Duration {
		t.Helper()
		g, err := agent.MoveGap(context.Background(), b.agent(relayA), relayB)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	b.direct.Cut(true)
	b.waitActive(relayA, relayB, "consumer")
	if g := gap(); g != 0 {
		t.Errorf("the move away from the cut path waited for a gap of %v, want none", g)
	}
	waitFor(t, waitTimeout, "A to see direct down", func() bool {
		p, ok := pathOf(b.status(relayA), relayB, "direct")
		return ok && p.State != status.PathUp
	})
	b.direct.Cut(false)
	b.waitActive(relayA, relayB, "direct")
	ev, _ := lastEventWhere(b.status(relayA), relayB, func(e status.Event) bool { return e.To == "direct" })
	// Back by failback or better, both only to a path cheaper than the
	// one left, so faster: the move must wait. (recovered, after a loaded
	// machine starved both paths, moves at once: nothing is in flight.)
	if ev.Reason == "recovered" {
		t.Skipf("A came back to direct by %+v, not by a move between two live paths", ev)
	}
	if g := gap(); g <= 0 || g > failover.MaxReorderGap {
		t.Errorf("the move back to direct (%+v) waited for a gap of %v, want within (0, %v]", ev, g, failover.MaxReorderGap)
	}
}
