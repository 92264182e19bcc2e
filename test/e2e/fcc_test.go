package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// TestE2EFCC tests the control plane down to the data plane: three real
// API servers (the consumer on this process's loopback, each provider's
// inside its gateway pod's namespace), Liqo's objects as a real peering
// has them, the relays in TUN mode with `relay run --kubeconfig` in the
// gateway pods of the namespace model of Liqo's data path, and `relay
// operator` against the consumer. One FCC with overlapping pod CIDRs on
// A and B; nothing but the operator writes the RelayPeers.
func TestE2EFCC(t *testing.T) {
	requireK8sTools(t)
	requirePing(t)
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("needs nft (Debian nftables)")
	}
	w := newFCCWorld(t)
	m := w.m
	a1, a2, b1, b2 := m.a.pods[0], m.a.pods[1], m.b.pods[0], m.b.pods[1]
	for _, p := range []lqPod{a1, a2, b1, b2} {
		startWhoami(t, p.ns, fmt.Sprintf("%s:%d", p.ip, whoamiPort))
		startEcho(t, p.ns, fmt.Sprintf("%s:%d", p.ip, echoPort))
	}
	at := func(p *lqProvider, ext string, port int) string { return fmt.Sprintf("%s:%d", p.view(ext), port) }
	liqoSource := m.b.view(lqUnknown)

	w.applyFCC(t, "a-b")
	w.waitFCC(t, "a-b", "Connected over the direct path", func(st v1alpha1.ForeignClusterConnectionStatus) bool {
		return st.Phase == v1alpha1.PhaseConnected && on("direct")(st)
	})
	if f := w.fcc(t, "a-b"); f.Status.OverlayA != aOverlay || f.Status.OverlayB != bOverlay {
		t.Errorf("FCC overlay addresses %q %q, want the relays' own %s %s", f.Status.OverlayA, f.Status.OverlayB, aOverlay, bOverlay)
	}
	t.Logf("kubectl get fcc:\n%s", w.consumer.Kubectl(t, "get", "fcc"))

	t.Run("direct", func(t *testing.T) {
		mustPing(t, a1.ns, m.a.view(b1.ext), 3)
		mustPing(t, b2.ns, m.b.view(a2.ext), 3)
		// B's relay's own overlay address, from its Relay's status into
		// A's RelayPeer: A's relay reaches it.
		mustPing(t, m.a.gw, bOverlay, 2)
		for _, c := range []struct {
			from, to   lqPod
			fromP, toP *lqProvider
		}{{a1, b1, m.a, m.b}, {a2, b2, m.a, m.b}, {b1, a1, m.b, m.a}, {b2, a2, m.b, m.a}} {
			if got, want := whoami(t, c.from.ns, at(c.fromP, c.to.ext, whoamiPort)), c.toP.view(c.from.ext); got != want {
				t.Errorf("%s -> %s: the server sees %s, want %s (the relay's per-pod address)", c.from.ip, c.to.ext, got, want)
			}
		}
	})

	conn := lqDial(t, a1.ns, at(m.a, b2.ext, echoPort))
	if err := conn.roundTrip("before the cut"); err != nil {
		t.Fatal(err)
	}

	t.Run("cut direct: consumer path, FCC shows it, connection lives", func(t *testing.T) {
		m.a.gw.Run(t, "ip", "link", "set", m.a.directIf, "down")
		w.waitFCC(t, "a-b", "both directions on the consumer path", on("consumer"))
		t.Logf("kubectl get fcc:\n%s", w.consumer.Kubectl(t, "get", "fcc"))
		if err := conn.roundTrip("after the cut"); err != nil {
			t.Fatalf("the TCP connection opened over the direct path did not survive the switch: %v", err)
		}
		if got, want := whoami(t, a2.ns, at(m.a, b1.ext, whoamiPort)), m.b.view(a2.ext); got != want {
			t.Errorf("new connection over the consumer path: b1 sees %s, want %s", got, want)
		}
	})

	t.Run("delete the FCC: RelayPeers and routes gone", func(t *testing.T) {
		w.consumer.Kubectl(t, "delete", "fcc", "a-b", "--wait=false")
		waitFor(t, 60*time.Second, "the FCC and both RelayPeers gone", func() (bool, string) {
			pa, pb := w.a.relayPeers(t), w.b.relayPeers(t)
			return len(pa) == 0 && len(pb) == 0 && w.fcc(t, "a-b") == nil, fmt.Sprintf("a %d, b %d", len(pa), len(pb))
		})
		for _, x := range []struct {
			s    *fccSide
			peer *lqProvider
			over string
		}{{w.a, m.b, bOverlay}, {w.b, m.a, aOverlay}} {
			gone := []string{x.over}
			for _, p := range x.peer.pods {
				gone = append(gone, x.s.lq.view(p.ext))
			}
			waitFor(t, 30*time.Second, x.s.lq.name+" removes the routes to its peer", func() (bool, string) {
				routes := table(t, x.s.side)
				for _, g := range gone {
					if strings.Contains(routes, g) {
						return false, routes
					}
				}
				return true, routes
			})
		}
		// Liqo's path again, for new connections.
		if got := whoami(t, a1.ns, at(m.a, b1.ext, whoamiPort)); got != liqoSource {
			t.Errorf("after the FCC's deletion b1 sees %s, want %s (Liqo's path)", got, liqoSource)
		}
	})

	t.Run("relays stopped: Liqo's path", func(t *testing.T) {
		w.a.prov.StopRelay(t)
		w.b.prov.StopRelay(t)
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
