package mesh_test

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/demo/linkem"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

func testLogger() *slog.Logger {
	if os.Getenv("RELAY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// TestSessionsFormAtOnce checks that three relays started together all form
// WireGuard sessions without waiting for WireGuard's 5 s handshake retry:
// simultaneous initiations from both ends would cancel each other.
func TestSessionsFormAtOnce(t *testing.T) {
	f := mesh.New(testLogger())
	t.Cleanup(func() { _ = f.Close() })
	names := []string{"a", "b", "c"}
	for i, name := range names {
		_, err := f.Add(&mesh.Relay{Name: name,
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, 0, byte(i + 1)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 0}), 24)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, pair := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}} {
		if _, err := f.Connect(pair[0], pair[1], "direct", linkem.Config{Delay: 2 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// The bound is WireGuard's retry timer: a session formed before it
	// fires was not rescued by a retry. Polling, not a timing assertion on
	// speed: the test fails only if no session forms before the retry.
	deadline := start.Add(4500 * time.Millisecond)
	for _, from := range names {
		for _, peer := range names {
			if from == peer {
				continue
			}
			for !hasSession(f, from, peer) {
				if time.Now().After(deadline) {
					t.Fatalf("%s has no session with %s before WireGuard's 5 s retry", from, peer)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	t.Logf("all sessions after %s", time.Since(start))
}

func hasSession(f *mesh.Federation, from, peer string) bool {
	st, _ := f.Relay(from).Agent.Status(context.Background())
	for _, p := range st.Peers {
		if p.Name == peer && p.Reachable && !p.LastHandshake.IsZero() {
			return true
		}
	}
	return false
}
