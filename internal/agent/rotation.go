package agent

import (
	"fmt"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/core/status"
)

// This file carries out in-place key rotation (docs/protocol.md, "Key
// rotation"). Two roles, both possibly at once:
//
//   - The rotating relay X is given nextPrivateKey. It keeps running on its
//     current key and answers probe requests authenticated under the next
//     one: a peer that sends such a request has staged the key. When every
//     peer has (health.Rotation), or at the deadline, X switches: WireGuard
//     gets the new private key, every probe key is rederived, and a probe
//     request under the new key goes out on every path at once.
//   - A peer Y is given X's nextPublicKey. It proves it by sending every
//     probe to X twice, once under each key, and waits. The first probe
//     request from X under the new key says X has switched: Y then moves
//     X's allowed IPs to a WireGuard peer under the new key and removes the
//     old one, in one IpcSet, and starts the new session.
//
// Y adds the new WireGuard peer only then, not when staging: a prefix
// belongs to one WireGuard peer, which is both where Y sends it and the
// only peer whose packets from it Y accepts, so an earlier WireGuard peer
// under the new key would accept a session from X whose packets Y then
// drops. While X waits for Y's new session its packets to Y are held in
// WireGuard's queue, and packets Y sent before the move still decrypt at X
// under the old session.

// ownNext is our own staged next key.
type ownNext struct {
	priv keys.Private
	// keys holds, per peer name, the probe key between our next key and
	// the peer's current public key: it verifies the peer's proof.
	keys map[string]*health.PeerKey
}

// livePeer returns p as WireGuard runs it when old, the running state of
// the peer, has already switched to p's NextPublicKey: the peer's key is
// then that one and nothing is staged. The configuration may lag behind a
// switch (the operator copies the new key into publicKey later); this keeps
// such a reload from undoing it.
func livePeer(p config.Peer, old *peerState) config.Peer {
	if old != nil && !p.NextPublicKey.IsZero() && old.cfg.PublicKey == p.NextPublicKey {
		p.PublicKey, p.NextPublicKey = p.NextPublicKey, keys.Public{}
	}
	return p
}

// liveOwnKey does for our own key what livePeer does for a peer's: once we
// switched to cfg's nextPrivateKey, cfg reads as running that key with
// nothing staged.
func (a *Agent) liveOwnKey(cfg *config.Config) {
	if !cfg.NextPrivateKey.IsZero() && cfg.NextPrivateKey == a.cfg.PrivateKey {
		cfg.PrivateKey, cfg.NextPrivateKey = cfg.NextPrivateKey, keys.Private{}
	}
}

// prepareNext derives the probe keys of our next key with every peer of
// cfg, or returns nil when cfg stages no next key.
func prepareNext(cfg *config.Config, running map[string]*peerState) (*ownNext, error) {
	if cfg.NextPrivateKey.IsZero() {
		return nil, nil
	}
	n := &ownNext{priv: cfg.NextPrivateKey, keys: make(map[string]*health.PeerKey, len(cfg.Peers))}
	for _, p := range cfg.Peers {
		p = livePeer(p, running[p.Name])
		k, err := health.NewPeerKey(cfg.NextPrivateKey, p.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("nextPrivateKey with peers[%s].publicKey: %w", p.Name, err)
		}
		n.keys[p.Name] = k
	}
	return n, nil
}

// commitNext makes next our staged key and stages it in the engine: a
// rotation already staged with the same key keeps its start and the
// proofs of the peers that stay.
func (a *Agent) commitNext(next *ownNext, cfg *config.Config, now time.Time) {
	a.next = next
	in := engine.StageKey{Deadline: cfg.RotationDeadline()}
	if next != nil {
		in.Next = next.priv.PublicKey()
		for _, p := range cfg.Peers {
			in.Peers = append(in.Peers, p.Name)
		}
	}
	a.carryOut(a.eng.Step(now, in))
}

// logRotation logs the steps of our own rotation the engine took.
func (a *Agent) logRotation(evs []engine.RotationEvent) {
	for _, ev := range evs {
		switch ev.Kind {
		case "staged":
			a.log.Info("key rotation staged: waiting for every peer to accept the next key",
				"nextPublicKey", a.next.priv.PublicKey().String(), "deadline", ev.Deadline)
		case "withdrawn":
			a.log.Warn("key rotation withdrawn: nextPrivateKey is no longer set")
		case "peer-staged":
			a.log.Info("peer staged our next key", "peer", ev.Peer)
		}
	}
}

// rotationSignal says what an authenticated probe request under a staged
// key means.
type rotationSignal uint8

const (
	// peerStaged: the request was under our next key, so the peer has
	// staged it.
	peerStaged rotationSignal = iota + 1
	// peerSwitched: the request was under the peer's next key, so the peer
	// has switched to it.
	peerSwitched
)

// onRotationSignal handles a request under a staged key, on the owner
// goroutine.
func (a *Agent) onRotationSignal(r probeReply) {
	switch r.rot {
	case peerStaged:
		a.carryOut(a.eng.Step(r.at, engine.PeerStaged{Peer: r.peer}))
	case peerSwitched:
		a.carryOut(a.eng.Step(r.at, engine.PeerNotice{Peer: r.peer}))
	}
}

// switchKey makes our next key the running one, as the engine decided
// (its holds on our initiations are in place). It runs on the owner
// goroutine, serialised with Apply. Setting the key is the only fallible
// step; when it fails nothing else has changed, and the engine asks again
// after engine.SwitchRetry.
func (a *Agent) switchKey(d engine.KeySwitch, now time.Time) {
	n := a.next
	if n == nil {
		// The engine staged a key the shell no longer has: it must hear
		// the switch did not happen, or it holds our initiations for good.
		a.log.Error("key rotation: the engine asked for a switch, but no next key is staged")
		a.carryOut(a.eng.Step(now, engine.SwitchFailed{}))
		return
	}
	if err := a.dp.wg.IpcSet(fmt.Sprintf("private_key=%s\n", n.priv.Hex())); err != nil {
		a.log.Error("key rotation: setting the next private key in WireGuard", "err", err)
		a.carryOut(a.eng.Step(now, engine.SwitchFailed{}))
		return
	}
	// wireguard-go recomputed every peer's static secret and expired the
	// sending keys: packets to peers wait for a handshake under the new key,
	// which each peer starts when it sees our notice below; our own
	// initiations are held meanwhile (engine.HoldAll). Receiving on the
	// old sessions continues.
	cfg := a.cfg.Clone()
	cfg.PrivateKey, cfg.NextPrivateKey = n.priv, keys.Private{}
	for name, st := range a.peers {
		if k, ok := n.keys[name]; ok {
			st.key = k
		}
		a.rederiveNextKey(st, n.priv)
	}
	a.cfg = cfg
	a.cur.Store(cfg)
	a.next = nil
	a.publishProbeIndex()
	pub := n.priv.PublicKey()
	a.pubKey.Store(&pub)
	a.carryOut(a.eng.Step(now, engine.KeySwitched{Key: pub}))
	if d.Reason == "deadline" {
		a.log.Warn("key rotation: deadline passed, switched without the peers that did not stage the next key: they lose their session until they are given the new public key",
			"publicKey", pub.String(), "stragglers", d.Waiting)
	} else {
		a.log.Info("key rotation: every peer staged the next key, switched", "publicKey", pub.String())
	}
	for _, st := range a.peers {
		a.notifySwitch(st)
	}
}

// rederiveNextKey derives st's probe key under the peer's staged next
// public key again, from priv, our private key now: both relays of a pair
// may rotate at once, and the probe that says the peer switched is keyed
// by our current key.
func (a *Agent) rederiveNextKey(st *peerState, priv keys.Private) {
	if st.nextKey == nil || st.cfg.NextPublicKey.IsZero() {
		return
	}
	k, err := health.NewPeerKey(priv, st.cfg.NextPublicKey)
	if err != nil {
		a.log.Error("key rotation: deriving the probe key under the peer's next key", "peer", st.cfg.Name, "err", err)
		return
	}
	st.nextKey = k
}

// notifySwitch sends a probe request under our new key on every path of st
// now: the peer moves to the new key on the first one, without waiting for
// the next scheduled probe. Its nonce is 0, below every monitor nonce, so
// its answer matches nothing; the peer's replay filter for our new key is
// fresh, so it accepts it.
func (a *Agent) notifySwitch(st *peerState) {
	var out [health.ProbeSize]byte
	health.Marshal(&out, &health.Message{Kind: health.KindRequest, Nonce: 0, Epoch: a.epoch, Sender: st.key.Ours()})
	st.key.Seal(&out)
	for i, p := range st.paths {
		if !p.addr.IsValid() {
			continue
		}
		if err := a.dp.paths.SendTo(out[:], p.addr); err != nil {
			a.log.Debug("key rotation notice", "peer", st.cfg.Name, "path", st.cfg.Paths[i].Name, "err", err)
		}
	}
}

// movePeer moves st to its next public key, as the engine decided (mv):
// one IpcSet adds the WireGuard peer under the new key with st's allowed
// IPs (taking them from the old one), its session started when mv says
// so, and removes the old one. When the IpcSet fails it is undone, st
// stays as it was, and the peer's next request under the new key retries.
//
// What this can lose: packets the peer sent on the old session that are
// still inside WireGuard's receive pipeline when the allowed IPs move (the
// peer stopped sending on it before its notice, but decryption runs on
// other goroutines than the notice), and packets of ours still queued on
// the old WireGuard peer when it is removed. That is at most the packets
// in flight through one relay at that instant; wireguard-go offers no way
// to wait for its queues to drain.
func (a *Agent) movePeer(st *peerState, mv engine.KeyMove, now time.Time) {
	nc := st.cfg
	nc.PublicKey, nc.NextPublicKey = mv.Key, keys.Public{}
	if err := a.dp.wg.IpcSet(peerUAPI(&nc, mv.Start) + removePeerUAPI(st.cfg.PublicKey)); err != nil {
		a.log.Error("key rotation: moving the peer to its next key", "peer", st.cfg.Name, "err", err)
		// Back to the peer as it ran: started as the engine has it.
		if uerr := a.dp.wg.IpcSet(peerUAPI(&st.cfg, a.view(st).started) + removePeerUAPI(nc.PublicKey)); uerr != nil {
			a.log.Error("key rotation: restoring the peer's old key", "peer", st.cfg.Name, "err", uerr)
		}
		return
	}
	st.cfg = nc
	st.key, st.nextKey = st.nextKey, nil
	if a.next != nil {
		// Our own staged key's probe key with the peer was derived from its
		// old public key: the peer proves our next key under its new one.
		if k, err := health.NewPeerKey(a.next.priv, nc.PublicKey); err == nil {
			a.next.keys[st.cfg.Name] = k
		} else {
			a.log.Error("key rotation: deriving our next key's probe key with the peer's new key", "peer", st.cfg.Name, "err", err)
		}
	}
	a.publishProbeIndex()
	a.log.Info("peer switched to its next key", "peer", st.cfg.Name, "publicKey", nc.PublicKey.String())
	// Setting the keepalive above already sent an initiation when the peer
	// has one; the engine's handshake covers the peers without
	// (wireguard-go drops a second initiation within 5 s).
	a.carryOut(a.eng.Step(now, engine.PeerKeyMoved{Peer: st.cfg.Name, Key: nc.PublicKey}))
}

// rotationStatus is the staged rotation for /status, or nil.
func (a *Agent) rotationStatus(now time.Time) *status.KeyRotation {
	r, ok := a.eng.Rotation(now)
	if !ok {
		return nil
	}
	return &status.KeyRotation{
		NextPublicKey: r.Next.String(),
		Since:         status.At(r.Since),
		Deadline:      status.At(r.Deadline),
		Staged:        nonNil(r.Staged),
		Waiting:       nonNil(r.Waiting),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
