package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
)

// TestRotationSwitchesOnceEveryPeerStaged: staged, the rotation waits for
// every peer's proof; the last one makes the next tick hold our
// initiations to every peer and ask for the switch, once.
func TestRotationSwitchesOnceEveryPeerStaged(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.addPeer("c", key(10), failover.DefaultSettings(), "direct=2ms")
	r := n.step(StageKey{Next: key(2), Deadline: time.Hour, Peers: []string{"b", "c"}})
	if len(r.Rotation) != 1 || r.Rotation[0].Kind != "staged" || !r.Rotation[0].Deadline.Equal(n.now.Add(time.Hour)) {
		t.Fatalf("staging: %+v", r.Rotation)
	}
	n.step(PeerStaged{Peer: "b"})
	if r := n.step(Tick{}); r.SwitchKey != nil {
		t.Fatal("switched while c had not staged the key")
	}
	if v, ok := n.e.Rotation(n.now); !ok || !slices.Equal(v.Staged, []string{"b"}) || !slices.Equal(v.Waiting, []string{"c"}) {
		t.Fatalf("rotation view: %+v", v)
	}
	if r := n.step(PeerStaged{Peer: "b"}); len(r.Rotation) != 0 {
		t.Fatal("a second proof of b was news")
	}
	n.step(PeerStaged{Peer: "c"})
	r = n.step(Tick{})
	if r.SwitchKey == nil || r.SwitchKey.Reason != "all-staged" || len(r.SwitchKey.Waiting) != 0 {
		t.Fatalf("switch: %+v", r.SwitchKey)
	}
	if len(r.Holds) != 2 || !r.Holds[0].Hold || !r.Holds[1].Hold {
		t.Fatalf("holds with the switch: %+v", r.Holds)
	}
	n.step(KeySwitched{Key: key(2)})
	if _, ok := n.e.Rotation(n.now); ok {
		t.Fatal("a rotation is still staged after the switch")
	}
	if r := n.step(Tick{}); r.SwitchKey != nil {
		t.Fatal("asked to switch again")
	}
	if n.e.self != key(2) {
		t.Fatal("our key is not the new one")
	}
}

// TestRotationDeadlineLeavesStragglers: past the deadline the switch goes
// ahead and names the peers that did not stage the key; a failed switch
// lifts the holds, and the engine asks again SwitchRetry later, not on
// every tick in between, and wakes for it.
func TestRotationDeadlineLeavesStragglers(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.step(StageKey{Next: key(2), Deadline: time.Second, Peers: []string{"b"}})
	if r := n.step(Tick{}); r.SwitchKey != nil {
		t.Fatal("switched before the deadline")
	}
	n.now = n.now.Add(time.Second)
	r := n.step(Tick{})
	if r.SwitchKey == nil || r.SwitchKey.Reason != "deadline" || !slices.Equal(r.SwitchKey.Waiting, []string{"b"}) {
		t.Fatalf("switch at the deadline: %+v", r.SwitchKey)
	}
	r = n.step(SwitchFailed{})
	if len(r.Holds) != 1 || r.Holds[0].Hold {
		t.Fatalf("holds after the failed switch: %+v", r.Holds)
	}
	if r := n.step(Tick{}); r.SwitchKey != nil {
		t.Fatal("asked again at once after the failed switch")
	}
	if d := n.e.NextDeadline(); d.After(n.now.Add(SwitchRetry)) {
		t.Fatalf("next deadline %v after the retry at %v", d.Sub(n.now), SwitchRetry)
	}
	n.now = n.now.Add(SwitchRetry)
	if r := n.step(Tick{}); r.SwitchKey == nil {
		t.Fatal("no new attempt SwitchRetry after the failed switch")
	}
}

// TestRotationWakesForItsDecisions: the engine's next deadline covers the
// rotation's: at once after the last peer's proof, and at the deadline
// while a peer has not proved the key, even when nothing else needs a
// tick (no peers' paths to probe).
func TestRotationWakesForItsDecisions(t *testing.T) {
	n := newNet(t, us)
	n.step(StageKey{Next: key(2), Deadline: time.Minute, Peers: []string{"b", "c"}})
	if d := n.e.NextDeadline(); !d.Equal(n.now) {
		t.Fatalf("after staging: next deadline %v, want now", d.Sub(n.now))
	}
	n.step(Tick{})
	if d := n.e.NextDeadline(); !d.Equal(n.now.Add(time.Minute)) {
		t.Fatalf("waiting for proofs: next deadline %v, want the rotation's deadline", d.Sub(n.now))
	}
	n.now = n.now.Add(time.Second)
	n.step(PeerStaged{Peer: "b"})
	n.step(Tick{})
	n.step(PeerStaged{Peer: "c"})
	if d := n.e.NextDeadline(); !d.Equal(n.now) {
		t.Fatalf("after the last proof: next deadline %v, want now", d.Sub(n.now))
	}
	if r := n.step(Tick{}); r.SwitchKey == nil || r.SwitchKey.Reason != "all-staged" {
		t.Fatalf("switch after the last proof: %+v", r.SwitchKey)
	}
	if d := n.e.NextDeadline(); !d.IsZero() {
		t.Fatalf("while the shell switches: next deadline %v, want none", d.Sub(n.now))
	}
}

// TestRestagingKeepsTheRotation: the same next key staged again (a reload)
// keeps the start and the proofs of the peers that stay; another key
// starts afresh; a zero key withdraws it.
func TestRestagingKeepsTheRotation(t *testing.T) {
	n := newNet(t, us)
	n.step(StageKey{Next: key(2), Deadline: time.Hour, Peers: []string{"b", "c"}})
	start := n.now
	n.step(PeerStaged{Peer: "b"})
	n.now = n.now.Add(time.Minute)
	if r := n.step(StageKey{Next: key(2), Deadline: time.Hour, Peers: []string{"b", "d"}}); len(r.Rotation) != 0 {
		t.Fatalf("restaging the same key: %+v", r.Rotation)
	}
	v, _ := n.e.Rotation(n.now)
	if !v.Since.Equal(start) || !slices.Equal(v.Staged, []string{"b"}) || !slices.Equal(v.Waiting, []string{"d"}) {
		t.Fatalf("after restaging: %+v", v)
	}
	if r := n.step(StageKey{Next: key(3), Deadline: time.Hour, Peers: []string{"b"}}); len(r.Rotation) != 1 || r.Rotation[0].Kind != "staged" {
		t.Fatalf("another key: %+v", r.Rotation)
	}
	if v, _ := n.e.Rotation(n.now); !v.Since.Equal(n.now) || len(v.Staged) != 0 {
		t.Fatalf("another key kept the old rotation: %+v", v)
	}
	if r := n.step(StageKey{}); len(r.Rotation) != 1 || r.Rotation[0].Kind != "withdrawn" {
		t.Fatalf("withdrawing: %+v", r.Rotation)
	}
	if _, ok := n.e.Rotation(n.now); ok {
		t.Fatal("still staged after the withdrawal")
	}
}

// TestPeerNoticeMovesOnlyAStagedPeer: a peer's notice under its next key
// asks for its move only when it has one staged; once moved, the new key
// gets its session at once, and is the peer's key from then on.
func TestPeerNoticeMovesOnlyAStagedPeer(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.run(time.Second)
	if r := n.step(PeerNotice{Peer: "b"}); len(r.MoveKeys) != 0 {
		t.Fatal("a move for a peer with no next key")
	}
	spec := n.e.peers["b"].spec
	spec.NextKey = key(5)
	n.step(SetPeer{Spec: spec})
	if r := n.step(PeerNotice{Peer: "b"}); !slices.Equal(r.MoveKeys, []KeyMove{{Peer: "b", Key: key(5), Start: true}}) {
		t.Fatalf("moves: %v", r.MoveKeys)
	}
	r := n.step(PeerKeyMoved{Peer: "b", Key: key(5)})
	if len(r.Handshakes) != 1 || r.Handshakes[0].Reason != ReasonPeerRotated {
		t.Fatalf("handshakes after the move: %+v", r.Handshakes)
	}
	if p := n.e.peers["b"].spec; p.PublicKey != key(5) || !p.NextKey.IsZero() {
		t.Fatalf("keys after the move: %v next %v", p.PublicKey, p.NextKey)
	}
}

// TestPeerNoticeStartsOnlyAPeerWithASession: a peer that never came up
// and never started a session moves to its next key without starting one
// (no keepalive, no handshake): its session starts when a path comes up.
func TestPeerNoticeStartsOnlyAPeerWithASession(t *testing.T) {
	n := newNet(t, us)
	n.addPeer("b", peerKey, failover.DefaultSettings(), "direct=2ms")
	n.linkOf("b", "direct").cut = true
	n.run(time.Second)
	spec := n.e.peers["b"].spec
	spec.NextKey = key(5)
	n.step(SetPeer{Spec: spec})
	if r := n.step(PeerNotice{Peer: "b"}); !slices.Equal(r.MoveKeys, []KeyMove{{Peer: "b", Key: key(5), Start: false}}) {
		t.Fatalf("moves: %v", r.MoveKeys)
	}
	if r := n.step(PeerKeyMoved{Peer: "b", Key: key(5)}); len(r.Handshakes) != 0 {
		t.Fatalf("a handshake for a peer that never came up: %+v", r.Handshakes)
	}
}

// TestRotationWaitsForTheRetry: a proof or a restage inside the retry
// window after a failed switch does not make the engine ask for a Tick
// before the retry (a busy loop of Ticks at one instant).
func TestRotationWaitsForTheRetry(t *testing.T) {
	n := newNet(t, us)
	n.step(StageKey{Next: key(2), Deadline: time.Second, Peers: []string{"b", "c"}})
	n.now = n.now.Add(time.Second)
	if r := n.step(Tick{}); r.SwitchKey == nil {
		t.Fatal("no switch at the deadline")
	}
	n.step(SwitchFailed{})
	retry := n.now.Add(SwitchRetry)
	n.now = n.now.Add(100 * time.Millisecond)
	for _, in := range []Input{PeerStaged{Peer: "b"}, StageKey{Next: key(2), Deadline: time.Second, Peers: []string{"b", "c"}}} {
		n.step(in)
		for i := 0; i < 3; i++ {
			if d := n.e.NextDeadline(); !d.Equal(retry) {
				t.Fatalf("after %T inside the retry window: next deadline %v, want the retry at %v", in, d.Sub(n.now), retry.Sub(n.now))
			}
			if r := n.step(Tick{}); r.SwitchKey != nil {
				t.Fatalf("asked again before the retry, after %T", in)
			}
		}
	}
	n.now = retry
	if r := n.step(Tick{}); r.SwitchKey == nil {
		t.Fatal("not asked again at the retry")
	}
}
