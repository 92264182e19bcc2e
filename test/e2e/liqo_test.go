package e2e

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// lqRelayConfig renders the relay of provider p in its gateway pod: TUN
// mode with a liqo section, and one peer whose prefixes and seesUs are what
// the operator writes into the RelayPeer (podmap). The consumer path's
// endpoint is the other relay's IP status.ip, in C's space
// (docs/liqo-addressing.md §9).
func lqRelayConfig(r *Relay, p, peer *lqProvider, side podmap.Side) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nprivateKeyFile: %s\n", p.name, filepath.Join(r.Dir, "key"))
	fmt.Fprintf(&b, "listenPort: %d\nmode: tun\n", relayPort)
	fmt.Fprintf(&b, "addresses: [%s/32]\nexports: [%s]\n", r.Side.Overlay, lqPodCIDR)
	fmt.Fprintf(&b, "admin: {listen: %s, metricsListen: 127.0.0.1:9587}\n", adminAddr)
	b.WriteString("log: {level: info, format: text}\n")
	fmt.Fprintf(&b, "liqo:\n  consumer: {cidr: %s, source: %s, via: %s}\n", lqExtCIDR, p.gwIP, lqTunnelC)
	fmt.Fprintf(&b, "peers:\n  - name: %s\n    publicKey: %s\n", peer.name, r.peerPub)
	b.WriteString("    prefixes:\n")
	for _, q := range side.Prefixes {
		fmt.Fprintf(&b, "      - %s\n", q)
	}
	fmt.Fprintf(&b, "      - %s/32\n", r.Peer.Overlay)
	b.WriteString("    seesUs:\n")
	for _, s := range side.SeesUs {
		fmt.Fprintf(&b, "      - {real: %s, as: %s}\n", s.Real, s.As)
	}
	b.WriteString("    paths:\n")
	fmt.Fprintf(&b, "      - {name: direct, endpoint: \"%s:%d\"}\n", peer.direct, relayPort)
	fmt.Fprintf(&b, "      - {name: consumer, endpoint: \"%s:%d\", bias: 5ms}\n", peer.gwExt, relayPort)
	return b.String()
}

// lqStarter starts the two relays in the gateway pods, with the peers the
// operator would write (podmap), and returns them and how to stop them.
type lqStarter func(t *testing.T, m *lqModel) (ra, rb *Relay, stop func())

// lqSides are the Sides the Relay helpers need for the gateway pods.
func (m *lqModel) lqSides() (sa, sb *Side) {
	sa = &Side{Name: m.a.name, NS: m.a.gw, Overlay: aOverlay, Exports: lqPodCIDR}
	sb = &Side{Name: m.b.name, NS: m.b.gw, Overlay: bOverlay, Exports: lqPodCIDR}
	return sa, sb
}

// lqFileRelays runs `relay run -c FILE` with the peer in the file.
func lqFileRelays(t *testing.T, m *lqModel) (ra, rb *Relay, stop func()) {
	t.Helper()
	res := m.mapping(t)
	sa, sb := m.lqSides()
	ra, rb = relayPair(t, sa, sb, RelaySpec{}, RelaySpec{})
	ra.writeFile(lqRelayConfig(ra, m.a, m.b, res.A))
	rb.writeFile(lqRelayConfig(rb, m.b, m.a, res.B))
	ra.Start()
	rb.Start()
	return ra, rb, func() { ra.Stop(); rb.Stop() }
}

// lqKubeRelays runs `relay run -c FILE --kubeconfig` against an API server
// per provider (started in the gateway pod's namespace) and writes the
// RelayPeers as the consumer's operator would.
func lqKubeRelays(t *testing.T, m *lqModel) (ra, rb *Relay, stop func()) {
	t.Helper()
	res := m.mapping(t)
	sa, sb := m.lqSides()
	pa, pb := StartProvider(t, sa), StartProvider(t, sb)
	ra = lqStartKubeRelay(t, pa, m.a, sb)
	rb = lqStartKubeRelay(t, pb, m.b, sa)
	pubA, pubB := pa.PublishedKey(t), pb.PublishedKey(t)
	pa.ApplyPeer(t, sb, lqPeerSpec(m.b, sb, res.A, pubB))
	pb.ApplyPeer(t, sa, lqPeerSpec(m.a, sa, res.B, pubA))
	return ra, rb, func() { pa.StopRelay(t); pb.StopRelay(t) }
}

// lqStartKubeRelay is Provider.StartRelay with the liqo section, the admin
// metrics listener, and allowedPeerPrefixes that admit the provider's view
// of C's external CIDR.
func lqStartKubeRelay(t *testing.T, p *Provider, lp *lqProvider, peer *Side) *Relay {
	t.Helper()
	return p.startRelayWith(t, peer, fmt.Sprintf(`name: %s
privateKeySecret: {name: relay-key}
listenPort: %d
mode: tun
addresses: [%s/32]
exports: [%s]
allowedPeerPrefixes: [%s, 100.80.0.0/16]
admin: {listen: %s, metricsListen: 127.0.0.1:9587}
log: {level: info, format: text}
liqo:
  consumer: {cidr: %s, source: %s, via: %s}
`, lp.name, relayPort, p.Side.Overlay, lqPodCIDR, lp.cfg.remoteExt.status, adminAddr, lqExtCIDR, lp.gwIP, lqTunnelC))
}

// lqPeerSpec is the RelayPeer for peer: its pods as podmap maps them, its
// relay's overlay address, our pods as it sees them, and the two paths.
func lqPeerSpec(peer *lqProvider, ps *Side, side podmap.Side, pub string) v1alpha1.RelayPeerSpec {
	spec := v1alpha1.RelayPeerSpec{
		PublicKey: pub,
		Paths: []v1alpha1.Path{
			{Name: "direct", Endpoint: fmt.Sprintf("%s:%d", peer.direct, relayPort)},
			{Name: "consumer", Endpoint: fmt.Sprintf("%s:%d", peer.gwExt, relayPort), Bias: v1alpha1.Duration(defaultBias["consumer"])},
		},
	}
	for _, q := range side.Prefixes {
		spec.Prefixes = append(spec.Prefixes, v1alpha1.Prefix(q.String()))
	}
	spec.Prefixes = append(spec.Prefixes, v1alpha1.Prefix(ps.Overlay+"/32"))
	for _, mp := range side.SeesUs {
		spec.SeesUs = append(spec.SeesUs, v1alpha1.Mapping{Real: v1alpha1.Prefix(mp.Real.String()), As: v1alpha1.Prefix(mp.As.String())})
	}
	return spec
}

// lqLeftovers lists what the Liqo integration leaves in a gateway pod.
func lqLeftovers(t *testing.T, gw *netns.NS) []string {
	t.Helper()
	var left []string
	if out, err := gw.Output("nft", "list", "table", "ip", "liqo-relay"); err == nil {
		left = append(left, "nft: "+out)
	}
	for _, line := range strings.Split(gw.Run(t, "ip", "rule", "show"), "\n") {
		if strings.Contains(line, "lookup 20001") || strings.Contains(line, "lookup 20002") || strings.Contains(line, "fwmark 0x40000000") {
			left = append(left, "rule: "+line)
		}
	}
	for _, tbl := range []string{"20001", "20002"} {
		if out, err := gw.Output("ip", "route", "show", "table", tbl); err == nil && strings.TrimSpace(out) != "" {
			left = append(left, "table "+tbl+": "+out)
		}
	}
	return left
}

// lqConn is a TCP connection opened inside a pod namespace.
type lqConn struct{ net.Conn }

func lqDial(t *testing.T, n *netns.NS, dst string) *lqConn {
	t.Helper()
	var c net.Conn
	d := net.Dialer{Timeout: 5 * time.Second}
	if err := n.Do(func() (err error) { c, err = d.Dial("tcp4", dst); return err }); err != nil {
		t.Fatalf("dial %s from %s: %v", dst, n.Name, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &lqConn{c}
}

// roundTrip sends a message on an echo connection and reads it back.
func (c *lqConn) roundTrip(msg string) error {
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return fmt.Errorf("echo returned %q, want %q", buf, msg)
	}
	return nil
}

// TestE2ELiqoDataPath runs the relays in TUN mode, with a liqo section and
// their peer in the file, inside the gateway pods of a namespace model of
// Liqo's data path (liqomodel.go), with overlapping pod CIDRs on A and B,
// and checks both halves of docs/liqo-addressing.md §10: connections move
// between the relay's paths transparently, and the fall back to Liqo's path
// serves new connections while the relay's pinned ones are reset.
func TestE2ELiqoDataPath(t *testing.T) {
	runLiqoDataPath(t, lqFileRelays)
}

// TestE2ELiqoDataPathKubernetes is TestE2ELiqoDataPath with the relays in
// Kubernetes mode (`relay run --kubeconfig`), each against its provider's
// own API server, and the RelayPeers written by the test as the consumer's
// operator would write them.
func TestE2ELiqoDataPathKubernetes(t *testing.T) {
	requireK8sTools(t)
	runLiqoDataPath(t, lqKubeRelays)
}

func runLiqoDataPath(t *testing.T, start lqStarter) {
	requirePing(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nft (Debian nftables)")
	}
	m := newLiqoModel(t)
	a1, a2, b1, b2 := m.a.pods[0], m.a.pods[1], m.b.pods[0], m.b.pods[1]
	for _, p := range []lqPod{a1, a2, b1, b2} {
		startWhoami(t, p.ns, fmt.Sprintf("%s:%d", p.ip, whoamiPort))
		startEcho(t, p.ns, fmt.Sprintf("%s:%d", p.ip, echoPort))
	}
	at := func(p *lqProvider, ext string, port int) string { return fmt.Sprintf("%s:%d", p.view(ext), port) }
	liqoSource := m.b.view(lqUnknown) // how B's pods see anything that crossed C

	// The model itself: without relays, Liqo's path carries a1 -> b1, and b1
	// sees C's unknown-source address, as B remaps it.
	if got := whoami(t, a1.ns, at(m.a, b1.ext, whoamiPort)); got != liqoSource {
		t.Fatalf("over Liqo's modelled path b1 sees %s, want %s", got, liqoSource)
	}

	ra, rb, stop := start(t, m)
	ra.WaitActive("direct", 30*time.Second)
	rb.WaitActive("direct", 30*time.Second)

	t.Run("direct", func(t *testing.T) {
		mustPing(t, a1.ns, m.a.view(b1.ext), 3)
		mustPing(t, b2.ns, m.b.view(a2.ext), 3)
		// Each pod sees the other as the other's ext, as its own cluster
		// remaps it: the addresses the relays carry, on both nodes.
		for _, c := range []struct {
			from, to lqPod
			fromP    *lqProvider
			toP      *lqProvider
		}{{a1, b1, m.a, m.b}, {a1, b2, m.a, m.b}, {a2, b1, m.a, m.b}, {b1, a1, m.b, m.a}, {b2, a2, m.b, m.a}} {
			want := c.toP.view(c.from.ext)
			if got := whoami(t, c.from.ns, at(c.fromP, c.to.ext, whoamiPort)); got != want {
				t.Errorf("%s -> %s: the server sees %s, want %s (the relay's per-pod address)", c.from.ip, c.to.ext, got, want)
			}
		}
	})

	conn := lqDial(t, a1.ns, at(m.a, b2.ext, echoPort))
	if err := conn.roundTrip("before the cut"); err != nil {
		t.Fatal(err)
	}

	t.Run("cut direct: consumer path, connection lives", func(t *testing.T) {
		m.a.gw.Run(t, "ip", "link", "set", m.a.directIf, "down")
		ra.WaitActive("consumer", 30*time.Second)
		rb.WaitActive("consumer", 30*time.Second)
		if err := conn.roundTrip("after the cut"); err != nil {
			t.Fatalf("the TCP connection opened over the direct path did not survive the switch: %v", err)
		}
		if got, want := whoami(t, a2.ns, at(m.a, b1.ext, whoamiPort)), m.b.view(a2.ext); got != want {
			t.Errorf("new connection over the consumer path: b1 sees %s, want %s", got, want)
		}
	})

	t.Run("a Liqo rule added after start does not win", func(t *testing.T) {
		// A rule shaped like Liqo's gw-ext rules (iif <geneve> to <cidr>),
		// without priority: the kernel puts it ahead of every rule but
		// local. Ahead of the relay's, it would send the pinned packets from
		// node 1 into Liqo's tunnel untranslated, where C drops them. (A rule
		// without iif would also be caught by the TUN route manager's own
		// shadowing check; this one is not.)
		liqoRouteTable{name: "late-rule", rules: [][]string{{"iif", "liqo.n1", "to", m.a.cfg.remoteExt.status}},
			routes: [][]string{{m.a.cfg.remoteExt.status, "via", lqTunnelC}}}.apply(t, m.a.gw)
		waitFor(t, 20*time.Second, "the relay's rules ahead of the late Liqo rule", func() (bool, string) {
			out := m.a.gw.Run(t, "ip", "rule", "show")
			late := strings.Index(out, "lookup "+liqoTableID("late-rule"))
			ours := strings.Index(out, "lookup 20001")
			return ours >= 0 && ours < late, out
		})
		if got, want := whoami(t, a1.ns, at(m.a, b1.ext, whoamiPort)), m.b.view(a1.ext); got != want {
			t.Errorf("after a late Liqo rule: b1 sees %s, want %s (the relay's path)", got, want)
		}
		if err := conn.roundTrip("after the late rule"); err != nil {
			t.Fatalf("the pinned connection broke after a late Liqo rule: %v", err)
		}
	})

	t.Run("every relay path down: Liqo's path for new connections, pinned ones reset", func(t *testing.T) {
		// The relays' own datagrams are dropped in C; Liqo's tunnel still
		// carries pod traffic.
		applyNft(t, m.a.cgw, "table inet block-relay {\n\tchain pre {\n\t\ttype filter hook prerouting priority -300; policy accept;\n"+
			fmt.Sprintf("\t\tudp dport %d drop\n\t\tudp sport %d drop\n\t}\n}\n", relayPort, relayPort))
		waitFor(t, 30*time.Second, "provider-a withdraws provider-b", func() (bool, string) {
			ps, err := ra.PeerStatus()
			if err != nil {
				return false, err.Error()
			}
			return !ps.Reachable, fmt.Sprintf("reachable=%v", ps.Reachable)
		})
		waitFor(t, 30*time.Second, "provider-b withdraws provider-a", func() (bool, string) {
			ps, err := rb.PeerStatus()
			if err != nil {
				return false, err.Error()
			}
			return !ps.Reachable, fmt.Sprintf("reachable=%v", ps.Reachable)
		})
		if err := conn.roundTrip("after the withdrawal"); err == nil {
			t.Errorf("a connection pinned to the relay survived the fall back to Liqo's path; it cannot (§10)")
		} else {
			t.Logf("pinned connection after the withdrawal: %v (expected)", err)
		}
		if got := whoami(t, a1.ns, at(m.a, b1.ext, whoamiPort)); got != liqoSource {
			t.Errorf("new connection after the withdrawal: b1 sees %s, want %s (Liqo's path)", got, liqoSource)
		}
		out, err := m.a.gw.Output("curl", "-sf", "http://127.0.0.1:9587/metrics")
		if err != nil {
			t.Fatalf("metrics: %v", err)
		}
		if !strings.Contains(out, `relay_connections_reset_total{peer="provider-b"}`) ||
			strings.Contains(out, `relay_connections_reset_total{peer="provider-b"} 0`) {
			t.Errorf("relay_connections_reset_total does not count the reset connection:\n%s", grepLines(out, "relay_connections_reset_total", "relay_policy_rule_reasserts_total"))
		}
		if !strings.Contains(out, "relay_policy_rule_reasserts_total") || strings.Contains(out, "relay_policy_rule_reasserts_total 0") {
			t.Errorf("relay_policy_rule_reasserts_total does not count the late rule:\n%s", grepLines(out, "relay_policy_rule_reasserts_total"))
		}
	})

	t.Run("relays stopped: Liqo's path", func(t *testing.T) {
		m.a.cgw.Run(t, "nft", "delete", "table", "inet", "block-relay")
		stop()
		for _, gw := range []*netns.NS{m.a.gw, m.b.gw} {
			if left := lqLeftovers(t, gw); len(left) > 0 {
				t.Errorf("after stop, %s still has:\n%s", gw.Name, strings.Join(left, "\n"))
			}
		}
		if got := whoami(t, a2.ns, at(m.a, b2.ext, whoamiPort)); got != liqoSource {
			t.Errorf("with the relays stopped b2 sees %s, want %s (Liqo's path)", got, liqoSource)
		}
		mustPing(t, b1.ns, m.b.view(a1.ext), 3)
	})
}

// grepLines returns the lines of s that contain one of words.
func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
