package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Log messages of key rotation that the tests check (see logTap).
const (
	msgAllStaged  = "key rotation: every peer staged the next key, switched"
	msgDeadline   = "key rotation: deadline passed, switched without the peers that did not stage the next key: they lose their session until they are given the new public key"
	msgPeerMoved  = "peer switched to its next key"
	msgPeerStaged = "peer staged our next key"
)

func init() {
	tappedMessages = append(tappedMessages, msgAllStaged, msgDeadline, msgPeerMoved, msgPeerStaged)
}

func newPrivateKey(t *testing.T) keys.Private {
	t.Helper()
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		t.Fatal(err)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k
}

// reload applies edit to a fresh copy of relay name's configuration.
func (b *bed) reload(name string, edit func(*config.Config)) error {
	cfg := b.config(name)
	edit(cfg)
	return b.agent(name).Reload(cfg)
}

// stageAKey gives relay name A's next public key.
func (b *bed) stagePeerKey(name string, next keys.Public) {
	b.t.Helper()
	if err := b.reload(name, func(c *config.Config) { peerOf(b.t, c, relayA).NextPublicKey = next }); err != nil {
		b.t.Fatalf("staging A's next key on %s: %v", name, err)
	}
}

// udpStream sends a numbered datagram every udpInterval to an echo pod and
// records which numbers came back: it counts lost packets, which a TCP
// stream would hide behind retransmissions.
type udpStream struct {
	c    net.Conn
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	sent uint64
	got  map[uint64]bool
}

const udpInterval = 5 * time.Millisecond

// maxRotationLoss bounds the datagrams of a udpStream a rotation may lose:
// those inside the moving peer's WireGuard pipeline at the instant it moves
// (rotation.go, movePeer), a few at this stream's 200 a second. A handshake
// that fails until WireGuard's 5 s retry loses about a thousand.
const maxRotationLoss = 20

func (b *bed) openUDPStream() *udpStream {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "udp", pod(2, podPort).String())
	if err != nil {
		b.t.Fatalf("dial B's UDP echo pod: %v", err)
	}
	if err := echoOnce(c, []byte("hello"), true); err != nil {
		b.t.Fatalf("first UDP echo: %v", err)
	}
	if err := c.SetDeadline(time.Time{}); err != nil { // echoOnce set one
		b.t.Fatal(err)
	}
	s := &udpStream{c: c, stop: make(chan struct{}), got: map[uint64]bool{}}
	s.wg.Go(func() {
		t := time.NewTicker(udpInterval)
		defer t.Stop()
		var msg [8]byte
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			s.mu.Lock()
			s.sent++
			binary.BigEndian.PutUint64(msg[:], s.sent)
			s.mu.Unlock()
			if _, err := c.Write(msg[:]); err != nil {
				return
			}
		}
	})
	s.wg.Go(func() {
		var msg [64]byte
		for {
			n, err := c.Read(msg[:])
			if err != nil {
				return
			}
			if n == 8 {
				s.mu.Lock()
				s.got[binary.BigEndian.Uint64(msg[:8])] = true
				s.mu.Unlock()
			}
		}
	})
	b.t.Cleanup(s.close)
	return s
}

// finish stops sending, waits until every echo has come back or lost ones
// are surely lost (waitTimeout after the last send with no news), and
// returns the numbers that never came back.
func (s *udpStream) finish(t *testing.T) (sent uint64, lost []uint64) {
	t.Helper()
	close(s.stop)
	count := func() (uint64, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.sent, len(s.got)
	}
	// Echoes in flight come back within a few round trips; wait until
	// the count stops growing for a second, at most waitTimeout.
	start, last := time.Now(), -1
	for time.Since(start) < waitTimeout {
		n, got := count()
		if uint64(got) >= n || got == last {
			break
		}
		last = got
		time.Sleep(time.Second) // real: polls real relays' handshake counters until they stop moving
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := uint64(1); i <= s.sent; i++ {
		if !s.got[i] {
			lost = append(lost, i)
		}
	}
	return s.sent, lost
}

func (s *udpStream) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.c.Close()
	s.wg.Wait()
}

// rotationOf returns relay name's staged rotation, failing when there is
// none.
func (b *bed) waitRotation(name string, cond func(staged, waiting []string) bool, what string) {
	b.t.Helper()
	waitFor(b.t, waitTimeout, name+": "+what, func() bool {
		r := b.status(name).KeyRotation
		return r != nil && cond(r.Staged, r.Waiting)
	})
}

// wireGuard returns what relay name's WireGuard holds.
func (b *bed) wireGuard(name string) string {
	b.t.Helper()
	text, err := agent.WireGuardPeers(context.Background(), b.agent(name))
	if err != nil {
		b.t.Fatalf("%s: WireGuard peers: %v", name, err)
	}
	return text
}

// TestKeyRotationInPlace rotates A's key while a UDP and a TCP stream run
// from A to a pod behind B. A stages its next key and waits for both peers;
// B stages it, A still waits for C; C stages it and A switches at once.
// Both streams keep flowing: A holds its packets in WireGuard's queue until
// B's new session is up, and B's old-session packets still decrypt at A;
// the UDP stream loses at most the few datagrams in flight through B's
// WireGuard pipeline at the instant B moves (maxRotationLoss; usually none). B and C
// end with A's new key only, in WireGuard and in their probes, and a later
// reload that makes the new key the configured one changes nothing.
func TestKeyRotationInPlace(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	oldKey := b.config(relayA).PrivateKey.PublicKey()
	next := newPrivateKey(t)
	nextPub := next.PublicKey()
	udp := b.openUDPStream()
	tcp := b.openStream()

	if err := b.reloadA(func(c *config.Config) { c.NextPrivateKey = next }); err != nil {
		t.Fatalf("staging A's next key: %v", err)
	}
	b.waitRotation(relayA, func(s, w []string) bool { return len(s) == 0 && len(w) == 2 }, "rotation staged, both peers waited for")
	b.stagePeerKey(relayB, nextPub)
	b.waitRotation(relayA, func(s, w []string) bool {
		return slices.Equal(s, []string{relayB}) && slices.Equal(w, []string{relayC})
	}, "B staged, C waited for")
	if got := b.agent(relayA).PublicKey(); got != oldKey {
		t.Fatalf("A switched to %s while C had not staged its next key", got)
	}
	n0 := tcp.count()
	b.stagePeerKey(relayC, nextPub)

	waitFor(t, waitTimeout, "A to switch", func() bool { return b.agent(relayA).PublicKey() == nextPub })
	for _, peer := range []string{relayB, relayC} {
		waitFor(t, waitTimeout, peer+" to move to A's new key with a session", func() bool {
			p, ok := b.peer(peer, relayA)
			return ok && p.PublicKey == nextPub.String() && p.NextPublicKey == "" && !p.LastHandshake.IsZero() && p.Reachable
		})
		wg := b.wireGuard(peer)
		if strings.Contains(wg, oldKey.Hex()) || !strings.Contains(wg, nextPub.Hex()) {
			t.Errorf("%s's WireGuard after the rotation holds the old key or lacks the new one:\n%s", peer, wg)
		}
	}
	if st := b.status(relayA); st.PublicKey != nextPub.String() || st.KeyRotation != nil {
		t.Errorf("A's status after the switch: publicKey %s (want %s), keyRotation %+v (want none)", st.PublicKey, nextPub, st.KeyRotation)
	}
	if !b.tap.has(relayA+": "+msgAllStaged) || b.tap.has(relayA+": "+msgDeadline) {
		t.Errorf("A did not switch because every peer staged")
	}
	tcp.waitCount(t, n0+100, waitTimeout)
	b.waitSessions(relayNames...)
	sent, lost := udp.finish(t)
	t.Logf("UDP stream: %d datagrams sent across the rotation, %d lost", sent, len(lost))
	if len(lost) > maxRotationLoss {
		t.Errorf("%d of %d datagrams lost across the rotation: numbers %d..%d", len(lost), sent, lost[0], lost[len(lost)-1])
	}

	// Probes: every relay's paths to A are up again, so the probes of
	// both sides authenticate under A's new key.
	for _, peer := range []string{relayB, relayC} {
		b.waitActive(peer, relayA, "direct")
	}

	// The operators catch up: A's file now holds the new key alone, and B
	// and C name it as A's publicKey. Nothing changes: no handshake.
	before := b.sessionMark()
	if err := b.reloadA(func(c *config.Config) { c.PrivateKey = next }); err != nil {
		t.Errorf("reloading A with the new key as privateKey: %v", err)
	}
	if err := b.reload(relayB, func(c *config.Config) { peerOf(t, c, relayA).PublicKey = nextPub }); err != nil {
		t.Errorf("reloading B with A's new key as publicKey: %v", err)
	}
	if after := b.sessionMark(); after != before {
		t.Errorf("catching up the configuration made a handshake:\nbefore %+v\nafter  %+v", before, after)
	}
	// The old key cannot be put back in place: it would be a new rotation.
	err := b.reloadA(func(c *config.Config) {})
	if err == nil || !strings.Contains(err.Error(), "privateKey") || !strings.Contains(err.Error(), "nextPrivateKey") {
		t.Errorf("reloading A with its old key: %v, want the privateKey change refused with a hint at nextPrivateKey", err)
	}
}

// TestKeyRotationDeadlineLeavesStragglers gives A a short deadline: B
// stages the next key, C never does. A waits for C until the deadline,
// then switches; B moves and keeps its session, C loses its path to A
// until its operator gives it A's new key, after which it recovers.
func TestKeyRotationDeadlineLeavesStragglers(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	oldKey := b.config(relayA).PrivateKey.PublicKey()
	next := newPrivateKey(t)
	nextPub := next.PublicKey()
	const deadline = 3 * time.Second

	b.stagePeerKey(relayB, nextPub)
	if err := b.reloadA(func(c *config.Config) { c.NextPrivateKey = next; c.KeyRotationDeadline = deadline }); err != nil {
		t.Fatalf("staging A's next key: %v", err)
	}
	b.waitRotation(relayA, func(s, w []string) bool {
		return slices.Equal(s, []string{relayB}) && slices.Equal(w, []string{relayC})
	}, "B staged, C waited for")
	r := b.status(relayA).KeyRotation
	if r == nil || r.Deadline.Time.Sub(r.Since.Time) != deadline {
		t.Fatalf("A's rotation %+v: want a deadline %s after it was staged", r, deadline)
	}
	if got := b.agent(relayA).PublicKey(); got != oldKey {
		t.Fatalf("A switched while C had not staged and the deadline was ahead")
	}
	waitFor(t, waitTimeout, "A to switch at the deadline", func() bool { return b.agent(relayA).PublicKey() == nextPub })
	switched := time.Now()
	if !b.tap.has(relayA + ": " + msgDeadline) {
		t.Errorf("A's switch was not logged as forced by the deadline")
	}
	if !r.Deadline.Time.Before(switched.Add(time.Second)) {
		t.Errorf("A switched at %v, before its deadline %v", switched, r.Deadline.Time)
	}
	waitFor(t, waitTimeout, "B to move to A's new key", func() bool {
		p, ok := b.peer(relayB, relayA)
		return ok && p.PublicKey == nextPub.String() && p.Reachable
	})
	waitFor(t, waitTimeout, "C to lose A (its probes and handshakes use A's old key)", func() bool {
		p, ok := b.peer(relayC, relayA)
		return ok && !p.Reachable
	})
	if err := b.reload(relayC, func(c *config.Config) { peerOf(t, c, relayA).PublicKey = nextPub }); err != nil {
		t.Fatalf("giving C A's new key: %v", err)
	}
	waitFor(t, waitTimeout, "C to reach A again under its new key", func() bool {
		p, ok := b.peer(relayC, relayA)
		return ok && p.Reachable && !p.LastHandshake.IsZero()
	})
	b.waitSessions(relayA, relayC)
}

// TestKeyRotationInvalidNextPublicKey stages nextPublicKeys that cannot be
// used: the reload is refused with the field path and why, and the relay's
// other peers keep their sessions (no handshake) and their traffic.
func TestKeyRotationInvalidNextPublicKey(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	s := b.openStream()
	before := b.sessionMark()
	cKey := b.config(relayC).PrivateKey.PublicKey()
	// A point of order 8 on Curve25519: every key agreement with it is
	// zero, so a probe key with it would be known to anyone.
	lowOrder := keys.Public{0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
		0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00}
	for _, tc := range []struct {
		name string
		key  keys.Public
		want []string
	}{
		{"another peer's key", cKey, []string{"peers[0].nextPublicKey", "already the publicKey of peer \"consumer\""}},
		{"the peer's own key", b.config(relayB).PrivateKey.PublicKey(), []string{"peers[0].nextPublicKey", "equals the peer's publicKey"}},
		{"low-order point", lowOrder, []string{"peers[" + relayB + "].nextPublicKey", "all-zero shared secret"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.reloadA(func(c *config.Config) { peerOf(t, c, relayB).NextPublicKey = tc.key })
			if err == nil {
				t.Fatal("reload accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	n0 := s.count()
	s.waitCount(t, n0+50, waitTimeout)
	if after := b.sessionMark(); after != before {
		t.Errorf("a refused reload disturbed the sessions:\nbefore %+v\nafter  %+v", before, after)
	}
	if p, _ := b.peer(relayA, relayB); p.NextPublicKey != "" {
		t.Errorf("a refused nextPublicKey is staged: %+v", p)
	}
}

func testLogLevel() slog.Level {
	if os.Getenv("RELAY_TEST_LOG") == "debug" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
