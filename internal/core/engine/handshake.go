package engine

import (
	"bytes"
	"maps"
	"slices"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Why a handshake starts: the Reason of a Handshake, and the reason label
// of the relay's handshake counter.
const (
	// ReasonStartup: the relay started and greets every configured peer.
	ReasonStartup = "startup"
	// ReasonPeerAdded: the peer appeared in a reloaded configuration.
	ReasonPeerAdded = "peer-added"
	// ReasonPeerRestarted: the peer's probes show it restarted (its
	// session state is gone), so a fresh handshake is needed.
	ReasonPeerRestarted = "peer-restarted"
	// ReasonRecovered: the peer became reachable again after its session
	// went stale.
	ReasonRecovered = "recovered"
	// ReasonPeerRotated: the peer switched to its next key and the shell
	// moved its allowed IPs to the new key: the new key needs its first
	// session.
	ReasonPeerRotated = "peer-rotated"
)

// staleSession is how old a handshake may be before a recovering peer gets a
// fresh one at once. WireGuard rekeys after 120 s and rejects keys after
// 180 s; a session older than that is of no use.
const staleSession = 120 * time.Second

// HandshakeDeferral is how long the relay with the larger public key leaves
// a handshake to its peer. Both relays usually see a path come up (or a
// restart) within one probe interval of each other; if both initiated at
// once, each would drop its own pending handshake on receiving the other's,
// and both would wait for WireGuard's 5 s retry. One second is several
// probe intervals and still far below that retry.
const HandshakeDeferral = time.Second

// InitiationHold bounds how long we hold our handshake initiations to a
// peer after switching keys: twice WireGuard's 5 s retry, so that the
// peer's own initiation has had its retry too. A peer that has not made a
// session with our new key by then is a straggler (or lost every packet);
// our initiations then go out again, as wireguard-go retries them.
const InitiationHold = 10 * time.Second

// deferredHandshake is a handshake left to the peer, done by us if no
// session has formed by then.
type deferredHandshake struct {
	at, since time.Time
	reason    string
	expire    bool
}

// kick starts a handshake with p: now when we are the designated
// initiator (the smaller public key), else after HandshakeDeferral unless
// the peer's own initiation has formed a session by then.
func (e *Engine) kick(p *peer, reason string, expire bool, now time.Time) {
	if bytes.Compare(e.self[:], p.spec.PublicKey[:]) < 0 {
		e.startKeepalive(p)
		e.ready.Handshakes = append(e.ready.Handshakes, Handshake{Peer: p.spec.Name, Reason: reason, Expire: expire})
		return
	}
	p.deferred = &deferredHandshake{at: now.Add(HandshakeDeferral), since: now, reason: reason, expire: expire}
}

// startKeepalive marks the peer's session started, once, and has its
// persistent keepalive set: held back until then because wireguard-go
// sends a keepalive (and so a handshake) the moment it is set.
func (e *Engine) startKeepalive(p *peer) {
	if p.started {
		return
	}
	p.started = true
	if p.spec.Keepalive {
		e.ready.Keepalives = append(e.ready.Keepalives, p.spec.Name)
	}
}

// runDeferred carries out a deferred handshake whose peer did not start a
// session in time.
func (e *Engine) runDeferred(p *peer, now time.Time) {
	d := p.deferred
	if d == nil || now.Before(d.at) {
		return
	}
	p.deferred = nil
	fresh := false
	if last := e.facts.LastHandshake(p.spec.Name); !last.IsZero() {
		// The peer's initiation made a fresh session; or, when the kick
		// only asked for a session (startup, peer added), the peer had
		// already made one before our path came up. Initiating again
		// would be redundant, and wireguard-go drops an initiation within
		// 5 s of the response it sent for that session anyway.
		fresh = !last.Before(d.since) || (!d.expire && now.Sub(last) < staleSession)
	}
	e.startKeepalive(p)
	if !fresh {
		e.ready.Handshakes = append(e.ready.Handshakes, Handshake{Peer: p.spec.Name, Reason: d.reason, Expire: d.expire})
	}
}

// holdAll holds our initiations to every peer from now on (HoldAll).
func (e *Engine) holdAll(now time.Time) {
	for _, name := range e.names() {
		e.peers[name].heldAt = now
		e.ready.Holds = append(e.ready.Holds, Hold{Peer: name, Hold: true})
	}
}

// releaseAll ends every hold (ReleaseAll).
func (e *Engine) releaseAll() {
	for _, name := range e.names() {
		e.peers[name].heldAt = time.Time{}
		e.ready.Holds = append(e.ready.Holds, Hold{Peer: name, Hold: false})
	}
}

// names are the peers' names, sorted: outputs for every peer come in
// this order.
func (e *Engine) names() []string { return slices.Sorted(maps.Keys(e.peers)) }

// releaseHold lets our initiations to p go out again once a session under
// our new key exists or InitiationHold has passed.
func (e *Engine) releaseHold(p *peer, now time.Time) {
	if p.heldAt.IsZero() {
		return
	}
	if last := e.facts.LastHandshake(p.spec.Name); !last.After(p.heldAt) && now.Sub(p.heldAt) < InitiationHold {
		return
	}
	e.ready.Holds = append(e.ready.Holds, Hold{Peer: p.spec.Name, Hold: false})
	p.heldAt = time.Time{}
}

// peerKeyMoved: the shell moved the peer to its next key (PeerKeyMoved).
// It is the peer's key from now on.
// The new key needs its session now, also when our first handshake with
// the peer is still deferred: the peer's initiation went out before it
// notified us, and we dropped it.
func (e *Engine) peerKeyMoved(in PeerKeyMoved) {
	p, ok := e.peers[in.Peer]
	if !ok {
		return
	}
	p.spec.PublicKey, p.spec.NextKey = in.Key, keys.Public{}
	if !p.started && !p.reachable {
		return
	}
	name := in.Peer
	p.started, p.deferred = true, nil
	e.ready.Handshakes = append(e.ready.Handshakes, Handshake{Peer: name, Reason: ReasonPeerRotated})
}
