package agent_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
)

// TestKeyRotationPeerMovesWithoutTheNotice: B staged A's next key and
// proved it, then lost every path to A, so the notice A sends when it
// switches (once C proved the key too) never reaches B. B cannot move
// meanwhile and stays on A's old key with the next one staged. When the
// paths come back, A's ordinary probes, all under the new key since the
// switch, tell B what the notice would have: B moves and makes a session
// under the new key. A peer that misses the notice is late, never stuck.
func TestKeyRotationPeerMovesWithoutTheNotice(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	oldKey := b.config(relayA).PrivateKey.PublicKey()
	next := newPrivateKey(t)
	nextPub := next.PublicKey()

	if err := b.reloadA(func(c *config.Config) { c.NextPrivateKey = next }); err != nil {
		t.Fatalf("staging A's next key: %v", err)
	}
	b.stagePeerKey(relayB, nextPub)
	b.waitRotation(relayA, func(s, w []string) bool {
		return slices.Equal(s, []string{relayB}) && slices.Equal(w, []string{relayC})
	}, "B staged, C waited for")

	b.direct.Cut(true)
	b.cons.Cut(true)
	b.stagePeerKey(relayC, nextPub)
	waitFor(t, waitTimeout, "A to switch", func() bool { return b.agent(relayA).PublicKey() == nextPub })
	// Everything A sent B since the switch, the notice included, was cut.
	if p, ok := b.peer(relayB, relayA); !ok || p.PublicKey != oldKey.String() || p.NextPublicKey != nextPub.String() {
		t.Fatalf("B moved with every path to A cut: %+v", p)
	}

	b.direct.Cut(false)
	b.cons.Cut(false)
	waitFor(t, waitTimeout, "B to move to A's new key with a session", func() bool {
		p, ok := b.peer(relayB, relayA)
		return ok && p.PublicKey == nextPub.String() && p.NextPublicKey == "" && !p.LastHandshake.IsZero() && p.Reachable
	})
	if wg := b.wireGuard(relayB); strings.Contains(wg, oldKey.Hex()) || !strings.Contains(wg, nextPub.Hex()) {
		t.Errorf("B's WireGuard after the move holds A's old key or lacks the new one:\n%s", wg)
	}
	if !b.tap.has(relayB + ": " + msgPeerMoved) {
		t.Errorf("B did not log its move to A's new key")
	}
}
