package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
)

// sessionMark is what a new WireGuard handshake between A and B would
// change: both sides' last handshake times and initiation counters.
type sessionMark struct {
	aLast, bLast status.Time
	aInit, bInit float64
}

func (b *bed) sessionMark() sessionMark {
	b.t.Helper()
	pa, _ := b.peer(relayA, relayB)
	pb, _ := b.peer(relayB, relayA)
	return sessionMark{
		aLast: pa.LastHandshake, bLast: pb.LastHandshake,
		aInit: b.counter(relayA, "relay_handshakes_initiated_total", map[string]string{"peer": relayB}),
		bInit: b.counter(relayB, "relay_handshakes_initiated_total", map[string]string{"peer": relayA}),
	}
}

// openStream starts an echo stream from A to the TCP echo pod behind B and
// waits for its first echoes.
func (b *bed) openStream() *stream {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "tcp", pod(2, podPort).String())
	if err != nil {
		b.t.Fatalf("dial B's echo pod: %v", err)
	}
	s := startStream(c)
	b.t.Cleanup(s.close)
	s.waitCount(b.t, 10, waitTimeout)
	return s
}

// reloadA applies edit to a fresh copy of A's configuration.
func (b *bed) reloadA(edit func(*config.Config)) error {
	cfg := b.config(relayA)
	edit(cfg)
	return b.agent(relayA).Reload(cfg)
}

func peerOf(t *testing.T, cfg *config.Config, name string) *config.Peer {
	t.Helper()
	p, ok := cfg.Peer(name)
	if !ok {
		t.Fatalf("no peer %s in config", name)
	}
	return p
}

// calmHealth slows failure detection to a second for the reload tests:
// they are about reloads, and on a loaded machine (two shared cores, the
// race detector) a relay that is not scheduled for 300 ms would otherwise
// see a healthy path as down and switch for reason "down".
const calmHealth = "{detectMultiplier: 10}"

// TestReloadPathOrderKeepsSession reverses the order of A's paths to B at
// runtime: traffic keeps flowing on the same (lowest-latency) path, and no
// new WireGuard handshake is made on either side.
func TestReloadPathOrderKeepsSession(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 5 * time.Millisecond, Consumer: 15 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	s := b.openStream()
	before := b.sessionMark()
	gen := b.status(relayA).ConfigGeneration

	n0 := s.count()
	err := b.reloadA(func(c *config.Config) {
		p := peerOf(t, c, relayB)
		slices.Reverse(p.Paths)
	})
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	st := b.status(relayA)
	if st.ConfigGeneration != gen+1 {
		t.Errorf("config generation %d after reload, want %d", st.ConfigGeneration, gen+1)
	}
	var names []string
	for _, p := range st.Peers {
		if p.Name == relayB {
			for _, path := range p.Paths {
				names = append(names, path.Name)
			}
		}
	}
	if !slices.Equal(names, []string{"consumer", "direct"}) {
		t.Errorf("status lists B's paths as %v, want the new order [consumer direct]", names)
	}
	// Two seconds of traffic after the reload (200 messages).
	s.waitCount(t, n0+200, waitTimeout)
	after := b.sessionMark()
	if after != before {
		t.Errorf("a new handshake happened:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := b.activePath(relayA, relayB); got != "direct" {
		t.Errorf("active path %q after reordering, want direct (selection is by latency, not order)", got)
	}
	es := s.since(n0)
	t.Logf("after reorder: %d echoes, largest gap %s, min RTT %s", len(es), maxGap(es), minRTT(es))
}

// TestReloadBiasMovesTrafficWithoutHandshake biases A's direct path to B so
// that the consumer path becomes cheaper: A moves B's traffic to it (reason
// "better") with no new handshake, and the stream's round trips show that
// A's packets really take the slower path.
func TestReloadBiasMovesTrafficWithoutHandshake(t *testing.T) {
	const direct, hop = 5 * time.Millisecond, 15 * time.Millisecond
	b := newBed(t, bedOptions{Direct: direct, Consumer: hop, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	s := b.openStream()
	before := b.sessionMark()

	err := b.reloadA(func(c *config.Config) {
		p := peerOf(t, c, relayB)
		for i := range p.Paths {
			if p.Paths[i].Name == "direct" {
				p.Paths[i].Bias = 500 * time.Millisecond
			}
		}
	})
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	took := b.waitActive(relayA, relayB, "consumer")
	switched := time.Now()
	n0 := s.count()
	s.waitCount(t, n0+100, waitTimeout)
	// Only messages sent after the switch was seen: earlier ones may have
	// gone the direct way.
	es := sentAfter(s.since(n0), switched)
	if len(es) < 50 {
		t.Fatalf("only %d echoes of messages sent after the switch", len(es))
	}
	// A lower bound, which no busy machine can break: A -> B over the
	// consumer path crosses two hops, B -> A the direct link.
	if floor := 2*hop + direct; minRTT(es) < floor {
		t.Errorf("min RTT %s after the switch, below the %s the consumer path takes: traffic did not move", minRTT(es), floor)
	}
	if after := b.sessionMark(); after != before {
		t.Errorf("a new handshake happened:\nbefore %+v\nafter  %+v", before, after)
	}
	if ev := switchEvent(b.status(relayA), relayB, "direct", "consumer"); ev.Reason != "better" {
		t.Errorf("switch to consumer %+v, want reason better", ev)
	}
	t.Logf("switched to consumer %s after the reload (betterHold 2s); min RTT now %s, largest gap %s",
		took, minRTT(es), maxGap(es))
}

// TestReloadRejected checks that an invalid reload is refused with a clear
// error and leaves the relay exactly as it was.
func TestReloadRejected(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	before := b.status(relayA)
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		want []string
	}{
		{"mode", func(c *config.Config) { c.Mode = config.ModeTUN }, []string{"mode", "cannot change while running"}},
		{"listenPort and mtu", func(c *config.Config) { c.ListenPort++; c.MTU = 1400 }, []string{"listenPort", "mtu", "restart"}},
		{"two peers claim one prefix", func(c *config.Config) {
			// A config built in code: Apply validates it as Parse does.
			peerOf(t, c, relayC).Prefixes = append(peerOf(t, c, relayC).Prefixes, peerOf(t, c, relayB).Prefixes[0])
		}, []string{"invalid configuration", "peers[1].prefixes[2]", "overlaps"}},
		{"bad seesUs", func(c *config.Config) {
			p := peerOf(t, c, relayB)
			p.SeesUs = []config.Mapping{{Real: c.Exports[0], As: c.Exports[0]}, {Real: c.Exports[0], As: c.Exports[0]}}
		}, []string{"seesUs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.reloadA(tc.edit)
			if err == nil {
				t.Fatal("reload accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			t.Logf("rejected: %v", err)
			after := b.status(relayA)
			if after.ConfigGeneration != before.ConfigGeneration {
				t.Errorf("generation %d -> %d", before.ConfigGeneration, after.ConfigGeneration)
			}
			if got, want := peerNames(after), peerNames(before); !slices.Equal(got, want) {
				t.Errorf("peers %v -> %v", want, got)
			}
			if p, _ := b.peer(relayA, relayB); !p.Reachable || p.ActivePath != "direct" {
				t.Errorf("B after a rejected reload: reachable %v, active %q", p.Reachable, p.ActivePath)
			}
		})
	}
	if got := b.counter(relayA, "relay_config_reloads_total", map[string]string{"result": "error"}); got < 4 {
		t.Errorf("relay_config_reloads_total{result=error} = %v, want 4", got)
	}
	// And it still carries traffic.
	s := b.openStream()
	s.waitCount(t, s.count()+10, waitTimeout)
}

func peerNames(st status.Status) []string {
	var out []string
	for _, p := range st.Peers {
		out = append(out, p.Name)
	}
	return out
}

// TestReloadRemoveAndAddPeer removes a peer with a reload (gone from status
// and metrics, B undisturbed), then adds it back (reachable, traffic flows).
func TestReloadRemoveAndAddPeer(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, Health: calmHealth})
	b.waitActive(relayA, relayB, "direct")
	s := b.openStream()
	before := b.sessionMark()
	if len(b.seriesWithLabel(relayA, "peer", relayC)) == 0 {
		t.Fatal("no metrics for the consumer peer before the removal: the check below would prove nothing")
	}

	err := b.reloadA(func(c *config.Config) {
		c.Peers = slices.DeleteFunc(c.Peers, func(p config.Peer) bool { return p.Name == relayC })
	})
	if err != nil {
		t.Fatalf("reload removing %s: %v", relayC, err)
	}
	if _, ok := b.peer(relayA, relayC); ok {
		t.Errorf("%s still in status after its removal", relayC)
	}
	if got := b.seriesWithLabel(relayA, "peer", relayC); len(got) > 0 {
		t.Errorf("metrics still carry peer=%q: %v", relayC, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	c, err := b.agent(relayA).DialContext(ctx, "tcp", pod(3, podPort).String())
	cancel()
	if err == nil {
		c.Close()
		t.Errorf("dial to a removed peer's pod succeeded")
	}
	n0 := s.count()
	s.waitCount(t, n0+50, waitTimeout)
	if after := b.sessionMark(); after != before {
		t.Errorf("removing %s disturbed B's session:\nbefore %+v\nafter  %+v", relayC, before, after)
	}
	// Housekeeping rounds ran meanwhile (50 stream packets): nothing it
	// exports through a looked-up series (the agent keeps them per path)
	// brought the removed peer's back.
	if got := b.seriesWithLabel(relayA, "peer", relayC); len(got) > 0 {
		t.Errorf("metrics carry peer=%q again after its removal: %v", relayC, got)
	}

	if err := b.agent(relayA).Reload(b.config(relayA)); err != nil {
		t.Fatalf("reload adding %s back: %v", relayC, err)
	}
	took := waitFor(t, waitTimeout, relayC+" back with a session", func() bool {
		p, ok := b.peer(relayA, relayC)
		return ok && p.Reachable && !p.LastHandshake.IsZero()
	})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err = b.agent(relayA).DialContext(ctx, "tcp", pod(3, podPort).String())
	if err != nil {
		t.Fatalf("dial to the re-added peer's pod: %v", err)
	}
	defer c.Close()
	if err := echoOnce(c, []byte("back again"), false); err != nil {
		t.Fatal(err)
	}
	if got := b.counter(relayA, "relay_handshakes_initiated_total", map[string]string{"peer": relayC, "reason": "peer-added"}) +
		b.counter(relayC, "relay_handshakes_initiated_total", map[string]string{"peer": relayA}); got == 0 {
		t.Errorf("no handshake initiated after re-adding the peer")
	}
	// The re-added peer's series are back, and its counters count again.
	cPeer := map[string]string{"peer": relayC}
	sent0 := b.counter(relayA, "relay_probes_sent_total", cPeer)
	waitFor(t, waitTimeout, "the re-added peer's loss series and more probes", func() bool {
		got := b.seriesWithLabel(relayA, "peer", relayC)
		return slices.Contains(got, "relay_path_loss_ratio") && slices.Contains(got, "relay_probes_lost_total") &&
			b.counter(relayA, "relay_probes_sent_total", cPeer) > sent0
	})
	t.Logf("re-added peer reachable with a session after %s", took)
}
