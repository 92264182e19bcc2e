package main

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/demo/linkem"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// TestPingAndStatusCommands runs two in-process netstack relays joined by
// an emulated link, the first with an admin server, and drives `relay ping`
// and `relay status` against it.
func TestPingAndStatusCommands(t *testing.T) {
	f := mesh.New(nil)
	t.Cleanup(func() { _ = f.Close() })
	for i, name := range []string{"provider-a", "provider-b"} {
		_, err := f.Add(&mesh.Relay{Name: name,
			Overlay: netip.PrefixFrom(netip.AddrFrom4([4]byte{100, 80, 0, byte(i + 1)}), 32),
			Exports: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(i + 1), 0}), 24)})
		if err != nil {
			t.Fatal(err)
		}
	}
	const delay = 3 * time.Millisecond
	if _, err := f.Connect("provider-a", "provider-b", "direct", linkem.Config{Delay: delay}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var agents []*agent.Agent
	done := make(chan error, 2)
	t.Cleanup(func() {
		cancel()
		for range agents {
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	})
	for _, name := range []string{"provider-a", "provider-b"} {
		r := f.Relay(name)
		cfg, err := config.Parse([]byte(f.RenderConfig(r)))
		if err != nil {
			t.Fatal(err)
		}
		admin := "-"
		if name == "provider-a" {
			admin = "127.0.0.1:0"
		}
		a, err := agent.New(cfg, agent.Options{AdminAddr: admin})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
		go func() { done <- a.Run(ctx) }()
	}
	var addr string
	deadline := time.Now().Add(20 * time.Second)
	for addr == "" || !reachable(agents[0], "provider-b") {
		if time.Now().After(deadline) {
			t.Fatal("provider-a never listened and reached provider-b")
		}
		if a := agents[0].AdminAddr(); a != nil {
			addr = a.String()
		}
		time.Sleep(10 * time.Millisecond) // real: polls for the relay's admin listener to open
	}

	code, out, stderr := runCmd(t, "", "ping", "provider-b", "--admin", addr)
	if code != 0 || !strings.Contains(out, "ping provider-b") || !strings.Contains(out, "direct") || !strings.Contains(out, "ok") {
		t.Errorf("ping provider-b: exit %d\nstdout:\n%s\nstderr: %s", code, out, stderr)
	}
	t.Logf("relay ping:\n%s", out)
	code, _, stderr = runCmd(t, "", "ping", "--admin", addr, "nobody")
	if code != 1 || !strings.Contains(stderr, "unknown peer") {
		t.Errorf("ping of an unknown peer: exit %d, stderr %q; want 1 and \"unknown peer\"", code, stderr)
	}
	if code, _, _ := runCmd(t, "", "ping", "--admin", addr); code != 2 {
		t.Errorf("ping without a peer: exit %d, want 2", code)
	}
	code, out, stderr = runCmd(t, "", "status", "--admin", addr)
	if code != 0 || !strings.Contains(out, "provider-b") || !strings.Contains(out, "direct") {
		t.Errorf("status: exit %d\nstdout:\n%s\nstderr: %s", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, "", "status", "--admin", "127.0.0.1:1"); code != 1 || stderr == "" {
		t.Errorf("status of no relay: exit %d, stderr %q; want 1 and a message", code, stderr)
	}
}

func reachable(a *agent.Agent, peer string) bool {
	st, _ := a.Status(context.Background())
	for _, p := range st.Peers {
		if p.Name == peer && p.Reachable {
			return true
		}
	}
	return false
}
