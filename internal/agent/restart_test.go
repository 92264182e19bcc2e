package agent_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// restartBound is the generous bound on how soon traffic to a restarted
// peer resumes. WireGuard alone cannot meet it: the surviving relay keeps
// sending with keys the restarted one has lost, and WireGuard starts a new
// handshake only when it has heard nothing back for keepalive + rekey
// timeout (15 s); and when an initiation is lost or crosses the peer's own,
// its retry comes after 5 s. The relay sees the new boot epoch in the
// probes and handshakes at once, so this bound fails only if that is lost.
const restartBound = 4 * time.Second

// TestPeerRestart stops B and starts a new agent with the same key and port
// (a new boot epoch) while A keeps running: A notices the restart from the
// probes and traffic from A to a pod behind B resumes well before
// WireGuard's own timers would have brought it back.
func TestPeerRestart(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 5 * time.Millisecond, Consumer: 15 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "udp", pod(2, podPort).String())
	if err != nil {
		t.Fatalf("dial B's UDP echo pod: %v", err)
	}
	defer c.Close()
	if err := echoOnce(c, []byte("before"), true); err != nil {
		t.Fatalf("before the restart: %v", err)
	}

	b.stop(relayB)
	b.start(relayB)
	restarted := time.Now()
	resumed := pingUntilEcho(t, c, restarted, 2*waitTimeout)
	took := resumed.Sub(restarted)
	t.Logf("traffic to the restarted peer resumed %s after its new agent started", took.Round(time.Millisecond))
	if took > restartBound {
		t.Errorf("traffic resumed only after %s, want < %s (what WireGuard's own timers cannot do)", took, restartBound)
	}
	waitFor(t, waitTimeout, "A to log that B restarted", func() bool {
		return b.tap.has(relayA + ": peer restarted: starting a new handshake")
	})
	restartHS := b.counter(relayA, "relay_handshakes_initiated_total", map[string]string{"peer": relayB, "reason": "peer-restarted"})
	startupHS := b.counter(relayB, "relay_handshakes_initiated_total", map[string]string{"peer": relayA, "reason": "startup"})
	// One of the two relays makes the handshake (the one with the smaller
	// key; the other leaves it to it for a second), so either counter may
	// be the one that moved.
	if restartHS+startupHS == 0 {
		t.Errorf("no handshake counted: A peer-restarted %v, B startup %v", restartHS, startupHS)
	}
	t.Logf("handshakes initiated: A{reason=peer-restarted} %v, B{reason=startup} %v", restartHS, startupHS)
	b.waitSessions(relayNames...)
}

// pingUntilEcho sends a numbered datagram every 20 ms over c until the echo
// of one sent after since comes back; it returns when that echo arrived.
func pingUntilEcho(t *testing.T, c net.Conn, since time.Time, timeout time.Duration) time.Time {
	t.Helper()
	var msg, buf [8]byte
	deadline := since.Add(timeout)
	for seq := uint64(1); time.Now().Before(deadline); seq++ {
		binary.BigEndian.PutUint64(msg[:], seq)
		if _, err := c.Write(msg[:]); err != nil {
			t.Fatalf("write: %v", err)
		}
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		for {
			n, err := c.Read(buf[:])
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				break
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			// Any echo is of a datagram sent after since: the one sent
			// before the restart was echoed before it.
			if n == len(buf) {
				return time.Now()
			}
		}
	}
	t.Fatalf("no echo within %s of the restart", timeout)
	return time.Time{}
}
