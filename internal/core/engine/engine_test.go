package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

// We are key 1, the smaller: we initiate handshakes at once.
var us, peerKey = key(1), key(9)

// TestFirstPathStartsTheSession: the first path up selects it, the peer
// becomes reachable, its keepalive is set and a handshake goes out, once.
func TestFirstPathStartsTheSession(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms", "consumer=10ms")
	n.run(time.Second)
	n.want(0,
		`move b active=0 second=-1 gap=false`, // SetPeer
		`path b/direct up=true`,
		`switch b ""->"direct" initial`,
		`route b reachable=true`,
		`keepalive b`,
		`handshake b startup expire=false`)
	if v, _ := n.e.Peer("b"); !v.Reachable || v.Active != 0 || !v.Started {
		t.Fatalf("peer after start: %+v", v)
	}
	hs := 0
	for _, l := range n.log {
		if strings.Contains(l, "handshake b") {
			hs++
		}
	}
	if hs != 1 {
		t.Fatalf("%d handshakes, want 1:\n%s", hs, n.since(0))
	}
}

// TestCutMovesToTheOtherPathAtOnce: when the active path is cut, the
// traffic moves to the other path without waiting for a flowlet boundary
// (what was in flight on a dead path is lost, not overtaken), and no new
// handshake is needed.
func TestCutMovesToTheOtherPathAtOnce(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms", "consumer=10ms")
	n.run(time.Second)
	mark := len(n.log)
	n.linkOf("b", "direct").cut = true
	n.run(time.Second)
	n.want(mark,
		`path b/direct up=false`,
		`switch b "direct"->"consumer" down`,
		`move b active=1 second=-1 gap=false`)
	n.never(mark, "route b")
	n.never(mark, "handshake")
}

// TestFailbackWaitsForAFlowletBoundary: back on the faster direct path
// after the failback hold, the move asks for a gap in the traffic: packets
// sent on the direct path would overtake those still on the consumer path.
func TestFailbackWaitsForAFlowletBoundary(t *testing.T) {
	n := newNet(t, us)
	sel := failover.DefaultSettings()
	n.addPeer("b", peerKey, sel, "direct=2ms", "consumer=30ms")
	n.run(time.Second)
	n.linkOf("b", "direct").cut = true
	n.run(time.Second)
	mark := len(n.log)
	n.linkOf("b", "direct").cut = false
	n.run(sel.FailbackHold + 2*time.Second)
	n.want(mark,
		`path b/direct up=true`,
		`switch b "consumer"->"direct" failback`,
		`move b active=0 second=-1 gap=true`)
	if v, _ := n.e.Peer("b"); v.MoveGap <= 0 {
		t.Fatalf("the failback's move gap is %v", v.MoveGap)
	}
}

// TestTheLargerKeyLeavesTheHandshakeToThePeer: with the larger key we wait
// HandshakeDeferral for the peer's initiation; when it makes a session in
// that time we send none, else we send ours.
func TestTheLargerKeyLeavesTheHandshakeToThePeer(t *testing.T) {
	for _, peerInitiates := range []bool{true, false} {
		n := newNet(t, key(200))
		n.addPeer("b", key(3), failover.DefaultSettings(), "direct=2ms")
		n.run(300 * time.Millisecond)
		n.never(0, "handshake")
		if v, _ := n.e.Peer("b"); !v.Deferred || !v.Reachable {
			t.Fatalf("peerInitiates=%v: before the deferral ends: %+v", peerInitiates, v)
		}
		if peerInitiates {
			n.lastHandshake["b"] = n.now
		}
		n.run(HandshakeDeferral + 200*time.Millisecond)
		if peerInitiates {
			n.never(0, "handshake")
		} else {
			n.want(0, `keepalive b`, `handshake b startup expire=false`)
		}
		if v, _ := n.e.Peer("b"); v.Deferred || !v.Started {
			t.Fatalf("peerInitiates=%v: after the deferral: %+v", peerInitiates, v)
		}
	}
}

// TestAllPathsDownAndBack: with every path cut the peer is unreachable and
// its routes go; when a path returns after the session went stale, a
// fresh handshake (expiring the old keys) goes out at once.
func TestAllPathsDownAndBack(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.run(time.Second)
	n.lastHandshake["b"] = n.now
	mark := len(n.log)
	n.linkOf("b", "direct").cut = true
	n.run(time.Second)
	n.want(mark, `path b/direct up=false`, `switch b "direct"->"" all-down`, `route b reachable=false`)
	n.run(staleSession)
	mark = len(n.log)
	n.linkOf("b", "direct").cut = false
	n.run(3 * time.Second) // a down path is probed slower: three answers take this long
	n.want(mark, `switch b ""->"direct" recovered`, `route b reachable=true`, `handshake b recovered expire=true`)
}

// TestDemandModeSendsFewProbesUnderTraffic: data that keeps arriving over
// the active path replaces most of its probes (one in ten still goes out,
// to keep the RTT fresh); once the data stops, every probe goes out again.
func TestDemandModeSendsFewProbesUnderTraffic(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.run(time.Second)
	probes := func(d time.Duration, traffic bool) int {
		before := n.probes
		end := n.now.Add(d)
		for n.now.Before(end) {
			if traffic {
				n.lastRx["b"] = n.now
				n.traffic["b"]++
			}
			n.run(2 * time.Millisecond)
		}
		return n.probes - before
	}
	busy, quiet := probes(2*time.Second, true), probes(2*time.Second, false)
	if quiet < 50 || busy*4 > quiet {
		t.Errorf("probes in 2 s: %d with traffic, %d without; want at least 50 without and under a quarter of that with", busy, quiet)
	}
}

// TestRedundancyAutoCopiesAfterTrouble: in auto mode, a switch for trouble
// starts copying the traffic to the second-best path; after the trouble
// has passed for long enough, the copying stops.
func TestRedundancyAutoCopiesAfterTrouble(t *testing.T) {
	n := newNet(t, us)
	sel := failover.DefaultSettings()
	sel.Redundancy = failover.RedundancyAuto
	n.addPeer("b", peerKey, sel, "direct=2ms", "consumer=10ms", "backup=20ms")
	n.run(time.Second)
	n.never(0, "redundancy")
	mark := len(n.log)
	n.linkOf("b", "direct").cut = true
	n.run(time.Second)
	n.want(mark, `switch b "direct"->"consumer" down`, `redundancy b to="backup"`)
	if v, _ := n.e.Peer("b"); v.Second != 2 {
		t.Fatalf("copies go to path %d, want 2 (backup)", v.Second)
	}
	mark = len(n.log)
	n.run(time.Minute)
	n.want(mark, `redundancy b to=""`)
}

// TestHoldsEndWithTheNewSession: after a key switch our initiations are
// held until the peer's session under the new key forms, or
// InitiationHold passes.
func TestHoldsEndWithTheNewSession(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.addPeer("c", key(10), failover.DefaultSettings(), "direct=2ms")
	n.run(time.Second)
	mark := len(n.log)
	n.step(HoldAll{})
	n.want(mark, "hold b true")
	n.want(mark, "hold c true")
	n.run(time.Second)
	n.never(mark, "false")
	n.lastHandshake["b"] = n.now
	n.run(time.Second)
	n.want(mark, "hold b false")
	n.never(mark, "hold c false")
	n.run(InitiationHold)
	n.want(mark, "hold c false")
}

// TestRestartedPeerGetsAFreshHandshake: a reply under a new epoch means
// the peer restarted and lost its keys: a handshake that expires ours goes
// out at once.
func TestRestartedPeerGetsAFreshHandshake(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.run(time.Second)
	mark := len(n.log)
	n.epoch = 8
	n.run(time.Second)
	n.want(mark, "handshake b peer-restarted expire=true")
	n.never(mark, "switch")
}
