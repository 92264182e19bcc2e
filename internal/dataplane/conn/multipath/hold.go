package multipath

// Holding a peer's handshake initiations serves in-place key rotation
// (docs/protocol.md, "Key rotation"): when a relay switches to its next
// key, wireguard-go starts a handshake with every peer at once, before the
// peers know the key. A peer that learns the key while that initiation is
// still in its queue would answer it and start its own at the same time,
// and two crossing initiations both fail until WireGuard's 5 s retry. So
// the rotating relay holds its initiations and the peer, which knows when
// it has moved, initiates alone.

// HoldInitiations makes Send drop the handshake initiations wireguard-go
// sends to the peer called name (hold), or send them again (!hold). Other
// messages, handshake responses included, are unaffected. It is safe to
// call at any time; unknown peers (never set, or removed) are ignored.
func (b *Bind) HoldInitiations(name string, hold bool) {
	if p := b.lookup(name); p != nil {
		p.holdInit.Store(hold)
	}
}

// holding reports whether bufs holds an initiation that p holds back.
func (p *peer) holding(bufs [][]byte) bool {
	if !p.holdInit.Load() {
		return false
	}
	for _, buf := range bufs {
		if messageType(buf) == msgInitiation {
			return true
		}
	}
	return false
}
