package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
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

func (r *relay) peer(t *testing.T, name string) (status.PeerStatus, bool) {
	t.Helper()
	st, err := r.agent.Status(context.Background())
	if err != nil {
		return status.PeerStatus{}, false
	}
	for _, p := range st.Peers {
		if p.Name == name {
			return p, true
		}
	}
	return status.PeerStatus{}, false
}
