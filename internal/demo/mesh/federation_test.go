package mesh_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
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
				time.Sleep(10 * time.Millisecond) // real: polls relays that handshake over real loopback sockets
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

// TestEveryPathComesUp checks that in a full mesh with two paths per pair
// every relay brings every path to every peer up, the standby paths as
// well as the active one: probing covers all of them, and each path's
// answers count for it.
func TestEveryPathComesUp(t *testing.T) {
	const n = 4
	f := mesh.New(testLogger())
	t.Cleanup(func() { _ = f.Close() })
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i)
		_, err := f.Add(&mesh.Relay{Name: names[i],
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, 0, byte(i + 1)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 0}), 24)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range names {
		for j := i + 1; j < n; j++ {
			for _, path := range []string{"direct", "consumer"} {
				if _, err := f.Connect(names[i], names[j], path); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	// A generous bound, not a speed assertion: paths come up in well
	// under a second here, and only one that never does trips it. The
	// agent has no change notification, so its status is polled.
	deadline := time.Now().Add(20 * time.Second)
	for _, name := range names {
		for {
			up, all := pathsUp(t, f, name)
			if up == all && all == 2*(n-1) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d of its %d paths up (want %d)", name, up, all, 2*(n-1))
			}
			time.Sleep(10 * time.Millisecond) // real: polls relays that probe over real loopback sockets
		}
	}
}

// pathsUp counts the paths of relay name that are up, and all its paths.
func pathsUp(t *testing.T, f *mesh.Federation, name string) (up, all int) {
	t.Helper()
	st, err := f.Relay(name).Agent.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Peers {
		for _, ps := range p.Paths {
			all++
			if ps.State == status.PathUp {
				up++
			}
		}
	}
	return up, all
}
