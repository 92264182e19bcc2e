package agent_test

import (
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// TestFailoverDuringTransfer cuts A-B's direct path in the middle of a bulk
// TCP transfer from A to a pod behind B. The transfer completes over the
// consumer path; the longest stall the receiving application saw is
// reported. After the link is restored, traffic fails back to direct once
// it has been up for failbackHold, as the relay's own clock tells: from
// the path's up transition to the failback event.
func TestFailoverDuringTransfer(t *testing.T) {
	const failbackHold = 3 * time.Second // the defaults, spelled out
	const betterHold = 2 * time.Second
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
	t.Logf("%d MB in %s; cut at %s, A switched %s after the cut; longest stall seen by the receiver: %s (ended %s after the cut)",
		x.size>>20, elapsed.Round(time.Millisecond), cutAt.Sub(x.start).Round(time.Millisecond),
		switched.Round(time.Millisecond), r.maxGap.Round(time.Millisecond), r.gapAt.Sub(cutAt).Round(time.Millisecond))

	// Restore the link once A no longer counts it up (down, or dampened
	// after many flaps): A has seen the cut, unless the transfer ended
	// within the standby detect time.
	waitFor(t, waitTimeout, "A to see direct down", func() bool {
		p, ok := pathOf(b.status(relayA), relayB, "direct")
		return ok && p.State != status.PathUp
	})
	// leftEv is A's last switch away from direct: the one the cut caused,
	// or, when A had already left direct because a loaded machine starved
	// a relay of CPU for the detect time, that one; direct stayed down
	// from the cut on either way.
	leftEv, ok := lastEventWhere(b.status(relayA), relayB, func(e status.Event) bool { return e.From == "direct" })
	if !ok {
		t.Fatal("no switch away from direct in A's events")
	}

	// The holds are checked on the relay's own clock: the time its health
	// monitor saw direct come back up (the path's lastChange) and the time
	// of the switch back (the event), both read from one status. The
	// test's clock would add however long this goroutine waited to run
	// after the restore, which a busy machine makes anything.
	restored := time.Now()
	b.direct.Cut(false)
	var st status.Status
	var ev status.Event
	var allDown bool
	waitFor(t, waitTimeout, "A back on direct", func() bool {
		st = b.status(relayA)
		ev, allDown = eventAfter(st, relayB, leftEv, "direct")
		return ev.To != ""
	})
	up, ok := pathOf(st, relayB, "direct")
	switch {
	case !ok || up.State != status.PathUp || up.LastChange.After(ev.At.Time):
		// Only a flap of direct between the switch back and this status
		// read (one poll, normally milliseconds) gets here.
		t.Fatalf("direct changed state after the switch back (%+v), so its up transition is lost: %+v", ev, up)
	case !up.LastChange.After(leftEv.At.Time):
		t.Fatalf("direct's last transition %s is not after the switch away from it %+v", up.LastChange.Time, leftEv)
	}
	held := ev.At.Sub(up.LastChange.Time)
	t.Logf("left direct by %s; back %s after its up transition, by %s (test clock: %s after the restore)",
		leftEv.Reason, held.Round(time.Millisecond), ev.Reason, time.Since(restored).Round(time.Millisecond))

	checkWayBack(t, leftEv, ev, allDown, held, failbackHold, betterHold)
}

// checkWayBack checks the switch back to direct (back), held after
// direct's up transition, against how A had left it (left) and whether
// the peer had no path at all in between (allDown).
//
// What the selector may do depends on how A left direct. Left because it
// went down, with a path in use ever since: A remembers direct and returns
// to it only by failback. After an all-down (the consumer path lost too,
// which a relay starved of CPU sees), or having left direct for another
// reason, it has forgotten direct: the way back is then a recovery or an
// ordinary "better" switch.
func checkWayBack(t *testing.T, leftEv, ev status.Event, allDown bool, held, failbackHold, betterHold time.Duration) {
	t.Helper()
	remembered := leftEv.Reason == "down" && !allDown
	switch ev.Reason {
	case "failback":
		// A lower bound on the relay's clock, not a speed assertion: the
		// path must stay up for failbackHold before traffic returns to it.
		if held < failbackHold {
			t.Errorf("failed back %s after direct came up, before failbackHold %s", held, failbackHold)
		}
	case "better":
		if remembered {
			t.Errorf("back to direct by %+v, want reason failback: A left it for being down (%+v)", ev, leftEv)
		}
		if held < betterHold {
			t.Errorf("switched to direct (better) %s after it came up, before betterHold %s", held, betterHold)
		}
	case "recovered":
		if !allDown {
			t.Errorf("back to direct by %+v with no all-down since %+v", ev, leftEv)
		}
	default:
		t.Errorf("back to direct by %+v, want reason failback", ev)
	}
}

// lastEventWhere returns peer's last event that match accepts.
func lastEventWhere(st status.Status, peer string, match func(status.Event) bool) (status.Event, bool) {
	for i := len(st.Events) - 1; i >= 0; i-- {
		if e := st.Events[i]; e.Peer == peer && match(e) {
			return e, true
		}
	}
	return status.Event{}, false
}

// eventAfter returns the first switch of peer to path `to` after the event
// after, and whether the peer had no path at all (all-down) from after on.
func eventAfter(st status.Status, peer string, after status.Event, to string) (status.Event, bool) {
	i := slices.Index(st.Events, after)
	if i < 0 {
		return status.Event{}, false
	}
	allDown := after.To == ""
	for _, e := range st.Events[i+1:] {
		if e.Peer != peer {
			continue
		}
		if e.To == to {
			return e, allDown
		}
		if e.To == "" {
			allDown = true
		}
	}
	return status.Event{}, allDown
}

// pathOf returns the status of peer's path called name.
func pathOf(st status.Status, peer, name string) (status.PathStatus, bool) {
	for _, p := range st.Peers {
		if p.Name != peer {
			continue
		}
		for _, path := range p.Paths {
			if path.Name == name {
				return path, true
			}
		}
	}
	return status.PathStatus{}, false
}

// switchEvent is the latest switch of peer from one path to another.
func switchEvent(st status.Status, peer, from, to string) status.Event {
	for i := len(st.Events) - 1; i >= 0; i-- {
		e := st.Events[i]
		if e.Peer == peer && e.From == from && e.To == to {
			return e
		}
	}
	return status.Event{}
}
