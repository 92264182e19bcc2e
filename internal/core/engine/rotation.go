package engine

import (
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Key rotation (docs/protocol.md, "Key rotation") in two roles. As the
// rotating relay, the engine waits after StageKey until every peer has
// proved our next key (PeerStaged) or the deadline passes, then holds our
// initiations and asks the shell to switch (Ready.SwitchKey). As a peer of
// a rotating relay, it asks the shell to move that peer to its next key
// when the peer's notice arrives (PeerNotice, Ready.MoveKeys).

// StageKey stages our next key, Next, which we switch to once every peer
// in Peers has proved it or Deadline after it was first staged. Staging
// the key already staged keeps its start and the proofs of the peers that
// stay; a zero Next withdraws the rotation.
type StageKey struct {
	Next     keys.Public
	Deadline time.Duration
	Peers    []string
}

// PeerStaged says a peer proved it accepts our next key (a probe request
// authenticated under it).
type PeerStaged struct{ Peer string }

// KeySwitched says the shell switched WireGuard to our next key, Key.
type KeySwitched struct{ Key keys.Public }

// SwitchFailed says the shell could not switch to our next key: our
// initiations go out again, and the switch is asked again after
// SwitchRetry.
type SwitchFailed struct{}

// PeerNotice says a peer's probe request under its next key arrived: the
// peer has switched to it.
type PeerNotice struct{ Peer string }

func (StageKey) input()     {}
func (PeerStaged) input()   {}
func (KeySwitched) input()  {}
func (SwitchFailed) input() {}
func (PeerNotice) input()   {}

// KeySwitch asks the shell to switch to our next key now. Reason is
// "all-staged" or "deadline"; Waiting are the peers that had not proved
// the key (they lose their session until they are given it).
type KeySwitch struct {
	Reason  string
	Waiting []string
}

// RotationEvent is a step of our own rotation, for the log: Kind is
// "staged" (Deadline is when it switches at the latest), "withdrawn" or
// "peer-staged" (Peer proved the key).
type RotationEvent struct {
	Kind     string
	Peer     string
	Deadline time.Time
}

// SwitchRetry is how long after a failed switch to our next key the
// engine asks for it again: a device that refused the key is not asked on
// every tick.
const SwitchRetry = time.Second

// rotation is our own staged next key.
type rotation struct {
	next keys.Public
	rot  *health.Rotation
	// wake is when the rotation next needs a Tick (zero: while the shell
	// switches); retry is when a switch may be asked again after one
	// failed.
	wake, retry time.Time
}

// stageKey stages, restages or withdraws our next key (StageKey).
func (e *Engine) stageKey(in StageKey, now time.Time) {
	if in.Next.IsZero() {
		if e.rot != nil {
			e.ready.Rotation = append(e.ready.Rotation, RotationEvent{Kind: "withdrawn"})
		}
		e.rot = nil
		return
	}
	if e.rot == nil || e.rot.next != in.Next {
		e.rot = &rotation{next: in.Next, rot: health.NewRotation(now, in.Deadline)}
		e.ready.Rotation = append(e.ready.Rotation, RotationEvent{Kind: "staged", Deadline: e.rot.rot.Deadline()})
	}
	e.rot.rot.SetPeers(in.Peers)
	e.rot.wake = now // the peers may all have proved it already
}

// peerStaged records a peer's proof of our next key (PeerStaged).
func (e *Engine) peerStaged(peer string, now time.Time) {
	if e.rot != nil && e.rot.rot.Staged(peer) {
		e.ready.Rotation = append(e.ready.Rotation, RotationEvent{Kind: "peer-staged", Peer: peer})
		e.rot.wake = now // it may be the last
	}
}

// stepRotation decides whether to switch to our next key now; the
// initiations to every peer are held first: wireguard-go starts its
// initiations the moment the key is set, and one that reached a peer
// after it moved would cross the peer's own.
func (e *Engine) stepRotation(now time.Time) {
	if e.rot == nil {
		return
	}
	if now.Before(e.rot.retry) {
		e.rot.wake = e.rot.retry // a proof or a restage inside the retry waits for it
		return
	}
	d := e.rot.rot.Decide(now)
	if !d.Switch {
		e.rot.wake = e.rot.rot.Deadline()
		return
	}
	e.holdAll(now)
	e.ready.SwitchKey = &KeySwitch{Reason: d.Reason, Waiting: d.Waiting}
	e.rot.wake = time.Time{}
}

// keySwitched: the shell switched to our next key (KeySwitched).
func (e *Engine) keySwitched(k keys.Public) {
	e.self = k
	e.rot = nil
}

// switchFailed: the shell could not switch (SwitchFailed). Our
// initiations go out again, and the switch is asked again after
// SwitchRetry.
func (e *Engine) switchFailed(now time.Time) {
	e.releaseAll()
	if e.rot != nil {
		e.rot.retry = now.Add(SwitchRetry)
		e.rot.wake = e.rot.retry
	}
}

// rotationWake is when our rotation next needs a Tick, never before a
// retry it waits for; zero: it needs none.
func (e *Engine) rotationWake() time.Time {
	if e.rot == nil || e.rot.wake.IsZero() {
		return time.Time{}
	}
	if e.rot.wake.Before(e.rot.retry) {
		return e.rot.retry
	}
	return e.rot.wake
}

// peerNotice asks for the peer's move to its next key, if it has one
// staged (PeerNotice).
func (e *Engine) peerNotice(name string) {
	if p, ok := e.peers[name]; ok && !p.spec.NextKey.IsZero() {
		e.ready.MoveKeys = append(e.ready.MoveKeys, KeyMove{Peer: name, Key: p.spec.NextKey, Start: p.started || p.reachable})
	}
}

// RotationView is our staged rotation: since and until when, and which
// peers have proved the key and which not (both sorted).
type RotationView struct {
	Next            keys.Public
	Since, Deadline time.Time
	Staged, Waiting []string
}

// Rotation returns our staged rotation at now, and false when none is.
func (e *Engine) Rotation(now time.Time) (RotationView, bool) {
	if e.rot == nil {
		return RotationView{}, false
	}
	d := e.rot.rot.Decide(now)
	return RotationView{
		Next: e.rot.next, Since: e.rot.rot.Since(), Deadline: e.rot.rot.Deadline(),
		Staged: slices.Clone(d.Ready), Waiting: slices.Clone(d.Waiting),
	}, true
}
