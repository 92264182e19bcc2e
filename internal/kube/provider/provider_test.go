package provider_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/provider"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// relay is an in-process netstack relay driven by the API server, running
// with its namespace's ServiceAccount token (the relay Role), not as admin.
type relay struct {
	name, ns string
	port     uint16
	agent    *agent.Agent
	cancel   context.CancelFunc
	done     chan struct{}
	// logs holds everything the relay logged at Info and above, for the
	// failure message (describe).
	logs *logBuffer
}

// logBuffer collects a relay's log lines; slog handlers write to it from
// any goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// describe is what a failure needs to be debugged: the relay's status as
// its admin API serves it and everything it logged at Info and above.
func (r *relay) describe() string {
	var st string
	if s, err := r.agent.Status(context.Background()); err != nil {
		st = fmt.Sprintf("(no status: %v)", err)
	} else if b, err := json.MarshalIndent(s, "", "  "); err != nil {
		st = fmt.Sprintf("(status not encodable: %v)", err)
	} else {
		st = string(b)
	}
	return fmt.Sprintf("=== relay %s/%s status:\n%s\n=== relay %s/%s log:\n%s", r.ns, r.name, st, r.ns, r.name, r.logs.String())
}

func freePort(t *testing.T) uint16 {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

// setupNamespace creates ns with the relay Role bound to ServiceAccount
// relay, and returns a kubeconfig holding that ServiceAccount's token.
func setupNamespace(t *testing.T, c *k8stest.Cluster, ns string) string {
	t.Helper()
	c.Kubectl(t, "create", "namespace", ns)
	c.Kubectl(t, "-n", ns, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "relay-role.yaml"))
	kc := c.ServiceAccountKubeconfig(t, ns, "relay")
	c.Kubectl(t, "-n", ns, "create", "rolebinding", "liqo-relay", "--role=liqo-relay", "--serviceaccount="+ns+":relay")
	return kc
}

func startRelay(t *testing.T, kubeconfig, ns, name string, addr, export string) *relay {
	t.Helper()
	return startRelayOn(t, kubeconfig, ns, name, addr, export, freePort(t))
}

// testHealth probes fast, so that paths come up and key rotations
// converge within a few intervals, but detects failure slowly, because
// this test never cuts a path: what it must not see is a healthy path
// declared down. Both relays, the API server and etcd share two cores with
// other work, under the race detector; at a load of 17 to 24 the test saw
// answers to 50 ms probes arrive up to 1 to 2 s late (up to 10 s once),
// many times a minute. At detectMultiplier 3 (150 ms) every such delay
// was a flap, four quick flaps dampen a path (failover defaults: penalty
// 1000, suppress 3500, reuse some 18 s after the last flap), and a path
// that goes on flapping stays dampened: the peer's only path was never
// chosen and the peer stayed unreachable for the whole minute a wait
// allows, although every probe was answered. detectMultiplier 40 puts
// the detect time at 2 s on an active path (4 s standby, 16 s when the
// peer is idle), above nearly every delay seen; dampening is off so that
// a longer stall costs the time it lasts and no more. None of this test's
// checks needs a path to go down.
const testHealth = "{interval: 50ms, idleInterval: 100ms, detectMultiplier: 40, dampening: {enabled: false}}"

func startRelayOn(t *testing.T, kubeconfig, ns, name string, addr, export string, port uint16) *relay {
	t.Helper()
	doc := fmt.Sprintf(`name: %s
privateKeySecret: {name: relay-key}
mode: netstack
listenPort: %d
addresses: [%s]
exports: [%s]
allowedPeerPrefixes: [10.0.0.0/8, 100.80.0.0/16]
health: %s
`, name, port, addr, export, testHealth)
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewMultiHandler(
		slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}),
		slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}),
	)).With("relay", name)
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := provider.Connect(kubeconfig, ns)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.LoadKey(ctx, cfg, log); err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	a, err := agent.New(cfg, agent.Options{Logger: log, AdminAddr: "-", Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := cl.NewControl(provider.Options{Base: cfg, Agent: a, Version: "test", Protocol: 1, Registry: m.Registry(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{name: name, ns: ns, port: port, agent: a, cancel: cancel, done: make(chan struct{}), logs: logs}
	go func() {
		defer close(r.done)
		adone := make(chan struct{})
		go func() { defer close(adone); _ = a.Run(ctx) }()
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("%s control loop: %v", name, err)
		}
		<-adone
	}()
	t.Cleanup(r.stop)
	// Cleanups run last first: this one, while the relay still runs.
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(r.describe())
		}
	})
	return r
}

func (r *relay) stop() {
	r.cancel()
	<-r.done
}

func (r *relay) peer(t *testing.T, name string) (admin.PeerStatus, bool) {
	t.Helper()
	st, err := r.agent.Status(context.Background())
	if err != nil {
		return admin.PeerStatus{}, false
	}
	for _, p := range st.Peers {
		if p.Name == name {
			return p, true
		}
	}
	return admin.PeerStatus{}, false
}

// stream sends a numbered datagram every 5 ms from A's netstack to an echo
// server on B's overlay address, and counts the answers.
type stream struct {
	mu      sync.Mutex
	sent    int
	got     map[uint64]bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func() error
}

func startStream(t *testing.T, a, b *relay) *stream {
	t.Helper()
	pc, err := b.agent.ListenUDP(netip.MustParseAddrPort("100.80.0.2:7"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := a.agent.DialContext(ctx, "udp", "100.80.0.2:7")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{got: map[uint64]bool{}, cancel: cancel}
	s.wg.Go(func() { // echo
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	})
	s.wg.Go(func() { // answers
		buf := make([]byte, 64)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			if n >= 8 {
				s.mu.Lock()
				s.got[binary.BigEndian.Uint64(buf)] = true
				s.mu.Unlock()
			}
		}
	})
	s.wg.Go(func() { // sender
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var buf [8]byte
		for seq := uint64(0); ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			binary.BigEndian.PutUint64(buf[:], seq)
			if _, err := conn.Write(buf[:]); err == nil {
				s.mu.Lock()
				s.sent++
				s.mu.Unlock()
			}
		}
	})
	s.closers = []func() error{pc.Close, conn.Close}
	return s
}

// stop ends the stream, waits a second for answers in flight and returns
// how many datagrams were sent and how many got no answer.
func (s *stream) stop() (sent, lost int) {
	s.cancel()
	time.Sleep(time.Second) // answers still in flight: nothing to poll for
	for _, c := range s.closers {
		_ = c()
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.sent - len(s.got)
}

// maxRotationLoss bounds the datagrams an in-place key rotation may cost a
// stream: those in flight through the moving relay's WireGuard at the
// instant it moves (internal/agent, rotation.go).
const maxRotationLoss = 20

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRelaysDrivenByTheAPIServer(t *testing.T) {
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
	ctx := context.Background()

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

	// Stand in for the consumer's operator: one RelayPeer each way.
	label := func(relay string) map[string]string { return map[string]string{v1alpha1.RelayLabel: relay} }
	spec := func(pub string, port uint16, prefixes ...string) v1alpha1.RelayPeerSpec {
		s := v1alpha1.RelayPeerSpec{PublicKey: pub, Paths: []v1alpha1.Path{{Name: "direct", Endpoint: fmt.Sprintf("127.0.0.1:%d", port)}}}
		for _, p := range prefixes {
			s.Prefixes = append(s.Prefixes, v1alpha1.Prefix(p))
		}
		return s
	}
	if err := adm.ApplyRelayPeer(ctx, "tenant-a", "provider-b", label("provider-a"), spec(pubB, b.port, "10.244.2.0/24", "100.80.0.2/32")); err != nil {
		t.Fatal(err)
	}
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), spec(pubA, a.port, "10.244.1.0/24", "100.80.0.1/32")); err != nil {
		t.Fatal(err)
	}
	readyOn := func(ns, name, path string) func() bool {
		return func() bool {
			rp, err := adm.GetRelayPeer(ctx, ns, name)
			if err != nil {
				return false
			}
			c := meta.FindStatusCondition(rp.Status.Conditions, v1alpha1.ConditionReady)
			return c != nil && c.Status == "True" && rp.Status.ActivePath == path && rp.Status.Reachable &&
				rp.Status.ObservedGeneration == rp.Generation
		}
	}
	waitFor(t, "A's RelayPeer for B on direct", readyOn("tenant-a", "provider-b", "direct"))
	waitFor(t, "B's RelayPeer for A on direct", readyOn("tenant-b", "provider-a", "direct"))
	if out := c.Kubectl(t, "-n", "tenant-a", "get", "relaypeers"); !strings.Contains(out, "ACTIVE") || !strings.Contains(out, "direct") {
		t.Errorf("kubectl get relaypeers:\n%s", out)
	}

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
	pc := config.PrivateKey{1, 2, 3}
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
	outside := spec(config.PrivateKey{9}.PublicKey().String(), 9, "192.168.7.0/24")
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
	dSpec := spec(config.PrivateKey{4}.PublicKey().String(), 9, "10.98.0.0/24")
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

	// In-place key rotation (docs/kubernetes.md, "Keys"): the annotation
	// stages a new key in A's Secret and Relay; the operator's part, copying
	// status.nextPublicKey into B's RelayPeer for A, is done here; A
	// switches once B proved it, B follows, and the Secret ends with the new
	// key alone. A UDP stream from A to B runs across it.
	c.Kubectl(t, "-n", "tenant-a", "delete", "relaypeer", "provider-d") // a peer that could never stage
	waitFor(t, "provider-d removed", func() bool { _, ok := a.peer(t, "provider-d"); return !ok })
	stream = startStream(t, a, b)
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
	sent, lost = stream.stop()
	t.Logf("UDP stream A->B across the key rotation: %d datagrams, %d lost", sent, lost)
	if sent == 0 || lost > maxRotationLoss {
		t.Errorf("the stream to provider-b lost %d of %d datagrams across the key rotation (at most %d allowed)", lost, sent, maxRotationLoss)
	}
	// The operator catches up: publicKey is the new key. Nothing moves.
	if err := adm.ApplyRelayPeer(ctx, "tenant-b", "provider-a", label("provider-b"), spec(nextA, a.port, "10.244.1.0/24", "100.80.0.1/32")); err != nil {
		t.Fatal(err)
	}
	pubA = nextA

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
}
