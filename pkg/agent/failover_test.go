package agent_test

import (
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/pkg/admin"
)

// TestFailoverDuringTransfer cuts A-B's direct path in the middle of a bulk
// TCP transfer from A to a pod behind B. The transfer completes over the
// consumer path; the longest stall the receiving application saw is
// reported. After the link is restored, traffic fails back to direct once
// it has been up for failbackHold.
func TestFailoverDuringTransfer(t *testing.T) {
	const failbackHold = 3 * time.Second // the default, spelled out
	b := newBed(t, bedOptions{Direct: 10 * time.Millisecond, Consumer: 30 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	b.waitActive(relayB, relayA, "direct")

	x := b.startBulk(transferSize())
	x.waitQuarter(t)
	cutAt := time.Now()
	b.direct.Cut(true)
	switched := b.waitActive(relayA, relayB, "consumer")

	r := x.finish(t, b, cutAt)
	elapsed := time.Since(x.start)
	if ev := switchEvent(b.status(relayA), relayB, "direct", "consumer"); ev.Reason != "down" {
		t.Errorf("switch to consumer: %+v, want reason down", ev)
	}
	t.Logf("%d MB in %s; cut at %s, A switched %s after the cut; longest stall seen by the receiver: %s (ended %s after the cut)",
		x.size>>20, elapsed.Round(time.Millisecond), cutAt.Sub(x.start).Round(time.Millisecond),
		switched.Round(time.Millisecond), r.maxGap.Round(time.Millisecond), r.gapAt.Sub(cutAt).Round(time.Millisecond))

	restored := time.Now()
	b.direct.Cut(false)
	back := b.waitActive(relayA, relayB, "direct")
	ev := lastEvent(b.status(relayA), relayB)
	if ev.To != "direct" || !slices.Contains([]string{"failback", "better"}, ev.Reason) {
		t.Errorf("back to direct by %+v, want reason failback or better", ev)
	}
	// A lower bound, not a speed assertion: the path must stay up for
	// failbackHold before traffic returns to it.
	if back < failbackHold {
		t.Errorf("failed back %s after the restore, before failbackHold %s", back, failbackHold)
	}
	t.Logf("failed back to direct %s after the restore (reason %s)", time.Since(restored).Round(time.Millisecond), ev.Reason)
}

// switchEvent is the latest switch of peer from one path to another.
func switchEvent(st admin.Status, peer, from, to string) admin.Event {
	for i := len(st.Events) - 1; i >= 0; i-- {
		e := st.Events[i]
		if e.Peer == peer && e.From == from && e.To == to {
			return e
		}
	}
	return admin.Event{}
}
