package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

func TestRelaysDrivenByTheAPIServer(t *testing.T) {
	p := startBed(t)
	p.publish(t)
	p.connect(t)
	p.update(t)
	p.churnNeighbours(t)
	p.rotateInPlace(t)
	p.rotateByRestart(t)
}

// bed is one API server with two relays, A in tenant-a and B in tenant-b,
// each running as its namespace's ServiceAccount; adm is the admin's
// client, which stands in for the consumer's operator. pubA and pubB are
// the keys the relays publish.
type bed struct {
	c          *k8stest.Cluster
	adm        *client.Client
	ctx        context.Context
	kcA        string
	a, b       *relay
	pubA, pubB string
}

func startBed(t *testing.T) *bed {
	c := k8stest.Start(t, "prov", "")
	c.InstallCRDs(t)
	kcA := setupNamespace(t, c, "tenant-a")
	kcB := setupNamespace(t, c, "tenant-b")
	// The Role gives the relay no list of Secrets, nor anything outside
	// its namespace.
	for _, args := range [][]string{
		{"auth", "can-i", "--as=system:serviceaccount:tenant-a:relay", "-n", "tenant-a", "list", "secrets"},
		{"auth", "can-i", "--as=system:serviceaccount:tenant-a:relay", "-n", "tenant-b", "get", "relaypeers"},
		{"auth", "can-i", "--as=system:serviceaccount:tenant-a:relay", "-n", "tenant-a", "get", "secret/other"},
	} {
		if out, _ := c.KubectlErr(args...); strings.TrimSpace(out) != "no" {
			t.Errorf("kubectl %s: %q, want no", strings.Join(args, " "), out)
		}
	}

	a := startRelay(t, kcA, "tenant-a", "provider-a", "100.80.0.1/32", "10.244.1.0/24")
	b := startRelay(t, kcB, "tenant-b", "provider-b", "100.80.0.2/32", "10.244.2.0/24")
	adm, err := client.New(c.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	return &bed{c: c, adm: adm, ctx: context.Background(), kcA: kcA, a: a, b: b}
}

func label(relay string) map[string]string { return map[string]string{v1alpha1.RelayLabel: relay} }

// spec is a RelayPeer for the relay of pub with a direct path to
// 127.0.0.1:port.
func spec(pub string, port uint16, prefixes ...string) v1alpha1.RelayPeerSpec {
	s := v1alpha1.RelayPeerSpec{PublicKey: pub, Paths: []v1alpha1.Path{{Name: "direct", Endpoint: fmt.Sprintf("127.0.0.1:%d", port)}}}
	for _, p := range prefixes {
		s.Prefixes = append(s.Prefixes, v1alpha1.Prefix(p))
	}
	return s
}

// readyOn is a condition: RelayPeer ns/name is Ready and reachable on
// path, for its current generation.
func (p *bed) readyOn(ns, name, path string) func() bool {
	return func() bool {
		rp, err := p.adm.GetRelayPeer(p.ctx, ns, name)
		if err != nil {
			return false
		}
		c := meta.FindStatusCondition(rp.Status.Conditions, v1alpha1.ConditionReady)
		return c != nil && c.Status == "True" && rp.Status.ActivePath == path && rp.Status.Reachable &&
			rp.Status.ObservedGeneration == rp.Generation
	}
}

// publish waits for each relay to keep its key in a Secret and publish
// its Relay, with the endpoints of the Service its spec names.
func (p *bed) publish(t *testing.T) {
	c, adm, ctx, a := p.c, p.adm, p.ctx, p.a
	// Each relay creates its key Secret and publishes its Relay.
	var pubA, pubB string
	waitFor(t, "both Relays published", func() bool {
		ra, errA := adm.GetRelay(ctx, "tenant-a", "provider-a")
		rb, errB := adm.GetRelay(ctx, "tenant-b", "provider-b")
		if errA != nil || errB != nil || !ra.Status.Ready || !rb.Status.Ready {
			return false
		}
		pubA, pubB = ra.Status.PublicKey, rb.Status.PublicKey
		return pubA != "" && pubB != "" && ra.Status.ListenPort == int32(a.port)
	})
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "secret", "relay-key", "-o", "jsonpath={.data.privateKey}"); out == "" {
		t.Error("the key Secret holds no privateKey")
	}
	// Endpoints from a LoadBalancer Service named by spec.serviceRef (no
	// controller here gives it an ingress: the test does).
	c.KubectlIn(t, `apiVersion: v1
kind: Service
metadata: {name: relay, namespace: tenant-a}
spec:
  type: LoadBalancer
  selector: {app: relay}
  ports: [{name: wireguard, port: 51900, protocol: UDP}]
`, "apply", "-f", "-")
	c.Kubectl(t, "-n", "tenant-a", "patch", "service", "relay", "--subresource=status", "--type=merge",
		"-p", `{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.5"},{"hostname":"relay-a.example.com"}]}}}`)
	c.Kubectl(t, "-n", "tenant-a", "patch", "relay", "provider-a", "--type=merge", "-p", `{"spec":{"serviceRef":{"name":"relay"}}}`)
	waitFor(t, "endpoints from the Service", func() bool {
		ra, err := adm.GetRelay(ctx, "tenant-a", "provider-a")
		return err == nil && strings.Join(ra.Status.Endpoints, ",") == "203.0.113.5:51900,relay-a.example.com:51900"
	})
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "relays"); !strings.Contains(out, "203.0.113.5:51900") || !strings.Contains(out, pubA) {
		t.Errorf("kubectl get relays:\n%s", out)
	}
	p.pubA, p.pubB = pubA, pubB
}

// connect stands in for the consumer's operator: one RelayPeer each way.
func (p *bed) connect(t *testing.T) {
	c, adm, ctx, a, b, pubA, pubB := p.c, p.adm, p.ctx, p.a, p.b, p.pubA, p.pubB
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-b", label("provider-a"), spec(pubB, b.port, "10.244.2.0/24", "100.80.0.2/32")); err != nil {
		t.Fatal(err)
	}
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), spec(pubA, a.port, "10.244.1.0/24", "100.80.0.1/32")); err != nil {
		t.Fatal(err)
	}
	readyOn := p.readyOn
	waitFor(t, "A's RelayPeer for B on direct", readyOn("tenant-a", "provider-b", "direct"))
	waitFor(t, "B's RelayPeer for A on direct", readyOn("tenant-b", "provider-a", "direct"))
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "relaypeers"); !strings.Contains(out, "ACTIVE") || !strings.Contains(out, "direct") {
		t.Errorf("kubectl get relaypeers:\n%s", out)
	}
}

// update changes A's RelayPeer for B: a prefix added, then moved to a
// new peer, and a second path.
func (p *bed) update(t *testing.T) {
	adm, ctx, a, b, pubB := p.adm, p.ctx, p.a, p.b, p.pubB
	// Update: a second path added on A's side, and one prefix moved from
	// peer provider-b to a new peer provider-c.
	s := spec(pubB, b.port, "10.244.2.0/24", "100.80.0.2/32", "10.99.0.0/24")
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-b", label("provider-a"), s); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "10.99.0.0/24 routed to provider-b", func() bool {
		p, ok := a.peer(t, "provider-b")
		return ok && strings.Contains(strings.Join(p.Prefixes, ","), "10.99.0.0/24")
	})
	s = spec(pubB, b.port, "10.244.2.0/24", "100.80.0.2/32")
	s.Paths = append(s.Paths, v1alpha1.Path{Name: "consumer", Endpoint: fmt.Sprintf("127.0.0.1:%d", b.port), Bias: "20ms"})
	pc := keys.Private{1, 2, 3}
	cSpec := spec(pc.PublicKey().String(), 9, "10.99.0.0/24")
	// provider-c first: it clashes until provider-b lets go of the prefix.
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-c", label("provider-a"), cSpec); err != nil {
		t.Fatal(err)
	}
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-b", label("provider-a"), s); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the prefix moved and the consumer path added", func() bool {
		pb, ok1 := a.peer(t, "provider-b")
		pcs, ok2 := a.peer(t, "provider-c")
		return ok1 && ok2 && len(pb.Paths) == 2 && strings.Contains(strings.Join(pcs.Prefixes, ","), "10.99.0.0/24") &&
			!strings.Contains(strings.Join(pb.Prefixes, ","), "10.99.0.0/24")
	})
	waitFor(t, "A's RelayPeer for B with two paths up", func() bool {
		rp, err := adm.GetRelayPeer(ctx, "tenant-a", "provider-b")
		return err == nil && len(rp.Status.Paths) == 2 && rp.Status.Paths[1].State == v1alpha1.PathUp
	})
}

// churnNeighbours changes A's other RelayPeers, valid and not, while a
// UDP stream runs from A to B.
func (p *bed) churnNeighbours(t *testing.T) {
	c, adm, ctx, a, b, pubB := p.c, p.adm, p.ctx, p.a, p.b, p.pubB
	// From here on a UDP stream runs from A to B: changes to other peers,
	// valid or not, must not cost it a packet.
	stream := startStream(t, a, b)

	// An invalid RelayPeer is refused with its field path; nothing else
	// moves.
	bad := spec(pubB, b.port, "10.244.1.0/24")
	bad.Paths[0].Endpoint = "127.0.0.1:0"
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-x", label("provider-a"), bad); err != nil {
		t.Fatal(err)
	}
	outside := spec(keys.Private{9}.PublicKey().String(), 9, "192.168.7.0/24")
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-y", label("provider-a"), outside); err != nil {
		t.Fatal(err)
	}
	cond := func(name string) *v1alpha1.RelayPeer {
		rp, err := adm.GetRelayPeer(ctx, "tenant-a", name)
		if err != nil {
			return nil
		}
		return rp
	}
	waitFor(t, "provider-x and provider-y refused", func() bool {
		x, y := cond("provider-x"), cond("provider-y")
		if x == nil || y == nil {
			return false
		}
		cx := meta.FindStatusCondition(x.Status.Conditions, v1alpha1.ConditionReady)
		cy := meta.FindStatusCondition(y.Status.Conditions, v1alpha1.ConditionReady)
		return cx != nil && cx.Status == "False" && strings.Contains(cx.Message, "spec.paths[0].endpoint") &&
			cy != nil && cy.Status == "False" && cy.Reason == v1alpha1.ReasonNotAllowed && strings.Contains(cy.Message, "spec.prefixes[0]")
	})
	waitFor(t, "a Warning event on provider-x", func() bool {
		out, err := c.KubectlErr("-n", "tenant-a", "get", "events.events.k8s.io", "--field-selector", "regarding.name=provider-x",
			"-o", "jsonpath={.items[*].type}/{.items[*].reason}")
		return err == nil && strings.Contains(out, "Warning") && strings.Contains(out, v1alpha1.ReasonInvalid)
	})
	if _, ok := a.peer(t, "provider-x"); ok {
		t.Error("an invalid RelayPeer reached the relay")
	}
	if p, ok := a.peer(t, "provider-b"); !ok || p.ActivePath == "" {
		t.Errorf("provider-b disturbed by an invalid neighbour: %+v", p)
	}

	// A valid new peer, then a change to it, then a deletion: B's traffic
	// does not notice.
	dSpec := spec(keys.Private{4}.PublicKey().String(), 9, "10.98.0.0/24")
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-d", label("provider-a"), dSpec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "provider-d applied", func() bool { _, ok := a.peer(t, "provider-d"); return ok })
	dSpec.Paths = append(dSpec.Paths, v1alpha1.Path{Name: "consumer", Endpoint: "127.0.0.1:10"})
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-d", label("provider-a"), dSpec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "provider-d's second path", func() bool { p, ok := a.peer(t, "provider-d"); return ok && len(p.Paths) == 2 })

	// Deletion removes the peer from the relay.
	c.Kubectl(t, "-n", "tenant-a", "delete", "relaypeer", "provider-c")
	waitFor(t, "provider-c removed", func() bool { _, ok := a.peer(t, "provider-c"); return !ok })
	sent, lost := stream.stop()
	t.Logf("UDP stream A->B while other RelayPeers changed: %d datagrams, %d lost", sent, lost)
	if sent == 0 || lost > 0 {
		t.Errorf("the stream to provider-b lost %d of %d datagrams while other peers changed", lost, sent)
	}
}

// rotateInPlace rotates A's key without a restart.
func (p *bed) rotateInPlace(t *testing.T) {
	c, adm, ctx, a, b, pubA := p.c, p.adm, p.ctx, p.a, p.b, p.pubA
	// In-place key rotation (docs/kubernetes.md, "Keys"): the annotation
	// stages a new key in A's Secret and Relay; the operator's part, copying
	// status.nextPublicKey into B's RelayPeer for A, is done here; A
	// switches once B proved it, B follows, and the Secret ends with the new
	// key alone. A UDP stream from A to B runs across it.
	c.Kubectl(t, "-n", "tenant-a", "delete", "relaypeer", "provider-d") // a peer that could never stage
	waitFor(t, "provider-d removed", func() bool { _, ok := a.peer(t, "provider-d"); return !ok })
	stream := startStream(t, a, b)
	c.Kubectl(t, "-n", "tenant-a", "annotate", "relay", "provider-a", v1alpha1.RotateKeyAnnotation+"=r1")
	var nextA string
	waitFor(t, "provider-a's next key staged", func() bool {
		ra, err := adm.GetRelay(ctx, "tenant-a", "provider-a")
		if err != nil || ra.Status.NextPublicKey == "" || ra.Status.KeyRotation != "r1" || ra.Status.PublicKey != pubA {
			return false
		}
		nextA = ra.Status.NextPublicKey
		return true
	})
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "secret", "relay-key", "-o", `jsonpath={.data.privateKey\.next}`); out == "" {
		t.Error("the key Secret holds no staged next key")
	}
	staged := spec(pubA, a.port, "10.244.1.0/24", "100.80.0.1/32")
	staged.NextPublicKey = nextA
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), staged); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "provider-a switched and keeps only the new key", func() bool {
		ra, err := adm.GetRelay(ctx, "tenant-a", "provider-a")
		return err == nil && ra.Status.PublicKey == nextA && ra.Status.NextPublicKey == ""
	})
	// A session under the new key: B's WireGuard peer for nextA is new, so
	// its last handshake is one under nextA. Reachable alone could be left
	// over from before the switch.
	waitFor(t, "provider-b on provider-a's new key", func() bool {
		q, ok := b.peer(t, "provider-a")
		return ok && q.PublicKey == nextA && q.Reachable && !q.LastHandshake.IsZero()
	})
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "secret", "relay-key", "-o", "jsonpath={.data}"); strings.Contains(out, "privateKey.next") {
		t.Errorf("the Secret still holds a staged key after the switch: %s", out)
	}
	sent, lost := stream.stop()
	t.Logf("UDP stream A->B across the key rotation: %d datagrams, %d lost", sent, lost)
	if sent == 0 || lost > maxRotationLoss {
		t.Errorf("the stream to provider-b lost %d of %d datagrams across the key rotation (at most %d allowed)", lost, sent, maxRotationLoss)
	}
	// The operator catches up: publicKey is the new key. Nothing moves.
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), spec(nextA, a.port, "10.244.1.0/24", "100.80.0.1/32")); err != nil {
		t.Fatal(err)
	}
	pubA = nextA
	p.pubA = pubA
}

// rotateByRestart rotates A's key by deleting its Secret and restarting
// it.
func (p *bed) rotateByRestart(t *testing.T) {
	c, adm, ctx, a, b, pubA := p.c, p.adm, p.ctx, p.a, p.b, p.pubA
	kcA := p.kcA
	// Key rotation by restart (docs/kubernetes.md): delete the key Secret
	// and restart the relay; it generates a new key and publishes it, and
	// once the other side's RelayPeer carries it the link comes back.
	a.stop()
	c.Kubectl(t, "-n", "tenant-a", "delete", "secret", "relay-key")
	a = startRelayOn(t, kcA, "tenant-a", "provider-a", "100.80.0.1/32", "10.244.1.0/24", a.port)
	var newA string
	waitFor(t, "provider-a's new public key", func() bool {
		ra, err := adm.GetRelay(ctx, "tenant-a", "provider-a")
		if err != nil || ra.Status.PublicKey == pubA || ra.Status.PublicKey == "" {
			return false
		}
		newA = ra.Status.PublicKey
		return true
	})
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), spec(newA, a.port, "10.244.1.0/24", "100.80.0.1/32")); err != nil {
		t.Fatal(err)
	}
	// As above: B's reachability may be left over from the old key (a
	// restart takes longer than testHealth's detect time to notice), its
	// handshake with the WireGuard peer under newA cannot.
	waitFor(t, "the link under the new key", func() bool {
		p, ok := a.peer(t, "provider-b")
		q, ok2 := b.peer(t, "provider-a")
		return ok && ok2 && p.Reachable && q.Reachable && q.PublicKey == newA && !q.LastHandshake.IsZero()
	})
	p.a = a
}
