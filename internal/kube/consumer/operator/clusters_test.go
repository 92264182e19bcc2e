package operator_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/connect"
	"github.com/liqo-relay/relay/internal/kube/consumer/operator"
	"github.com/liqo-relay/relay/internal/kube/liqo"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
	"github.com/liqo-relay/relay/test/k8s/liqofake"
)

const (
	consumerID = "cons-c"
	opNS       = "liqo-relay"
	tenantInP  = "liqo-tenant-cons-c" // each provider's tenant namespace for the consumer
	keyA       = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	keyB       = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="
	keyB2      = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCA="
)

// eventually waits for cond, failing after a generous deadline: the
// operator reacts to watch events, so this is not a timing assertion.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		time.Sleep(200 * time.Millisecond) // real: polls the operator's view of real API servers
	}
	t.Fatalf("%s: not reached; last: %s", what, last)
}

// provider is one provider API server with what Liqo and the relay put
// in its tenant namespace for the consumer.
type provider struct {
	id      string
	c       *k8stest.Cluster
	rc      *client.Client
	dyn     dynamic.Interface
	kubecfg string // the operator's kubeconfig for it (Role-bound token)
}

func startProvider(t *testing.T, id, key, overlay, gwIP, extSeen string) *provider {
	c := k8stest.Start(t, "prov-"+id, "")
	liqofake.InstallCRDs(t, c)
	p := &provider{id: id, c: c}
	var err error
	if p.rc, err = client.New(c.Config(t)); err != nil {
		t.Fatal(err)
	}
	if p.dyn, err = dynamic.NewForConfig(c.Config(t)); err != nil {
		t.Fatal(err)
	}
	c.Kubectl(t, "create", "namespace", tenantInP)
	p.kubecfg = liqofake.ProviderAccess(t, c, tenantInP)
	// The provider's Configuration for the consumer: the consumer's
	// external CIDR 10.80.0.0/16, seen here as extSeen.
	liqofake.Configuration(t, p.dyn, tenantInP, consumerID, consumerID,
		liqofake.CIDRs{Pod: "10.0.0.0/16", External: "10.100.0.0/16"}, liqofake.CIDRs{Pod: "10.1.0.0/16", External: "10.80.0.0/16"},
		liqofake.CIDRs{Pod: "10.60.0.0/16", External: extSeen})
	liqofake.GatewayServer(t, p.dyn, tenantInP, consumerID, gwIP)
	// The relay beside the gateway publishes itself.
	ctx := context.Background()
	if err := p.rc.ApplyRelay(ctx, tenantInP, "relay", map[string]string{v1alpha1.RelayLabel: "relay"}); err != nil {
		t.Fatal(err)
	}
	if err := p.rc.ApplyRelayStatus(ctx, tenantInP, "relay", v1alpha1.RelayStatus{
		PublicKey: key, Addresses: []string{overlay}, Endpoints: []string{"relay." + id + ".example:51900"}, ListenPort: 51900, Ready: true,
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

// consumer is the consumer API server with Liqo's objects for two
// providers, and a stand-in for Liqo's IPAM.
type consumer struct {
	c   *k8stest.Cluster
	dyn dynamic.Interface
	rc  *client.Client
	// ipamOn gates the stand-in IPAM: while false, new IPs get no status.
	ipamOn atomic.Bool
	next   atomic.Int32
}

func (cs *consumer) addProvider(t *testing.T, p *provider, podSeen string) {
	tenant := liqofake.Peering(t, cs.c, cs.dyn, p.id, tenantInP, p.kubecfg)
	// The consumer's Configuration for the provider: its pods 10.0.0.0/16
	// (both providers use it) seen here as podSeen.
	liqofake.Configuration(t, cs.dyn, tenant, p.id, p.id,
		liqofake.CIDRs{Pod: "10.1.0.0/16", External: "10.80.0.0/16"}, liqofake.CIDRs{Pod: "10.0.0.0/16", External: "10.100.0.0/16"},
		liqofake.CIDRs{Pod: podSeen, External: "10.101.0.0/16"})
}

// offload creates the IP Liqo makes for an offloaded pod (the stand-in
// IPAM gives it status.ip).
func (cs *consumer) offload(t *testing.T, name, podIP string) {
	liqofake.OffloadedPod(t, cs.dyn, "apps", name, podIP)
}

// ipam is Liqo's IPAM, until ctx is done: status.ip from the external
// CIDR 10.80.0.0/16; the operator's IPs wait while ipamOn is false.
func (cs *consumer) ipam(ctx context.Context) {
	liqofake.IPAM(ctx, cs.dyn, "10.80.0.0/16", func(o *unstructured.Unstructured) (string, bool) {
		if _, relay := o.GetLabels()[connect.LabelProvider]; relay && !cs.ipamOn.Load() {
			return "", false
		}
		n := cs.next.Add(1)
		return fmt.Sprintf("10.80.%d.%d", 1+n/200, 1+n%200), true
	})
}

// op is one operator replica.
type op struct {
	id     string
	cancel context.CancelFunc
	done   chan error
}

func startOperator(t *testing.T, kubeconfig, id string, listen ...string) *op {
	ctx, cancel := context.WithCancel(context.Background())
	o := &op{id: id, cancel: cancel, done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("replica", id)
	metricsAddr, healthAddr := "", ""
	if len(listen) == 2 {
		metricsAddr, healthAddr = listen[0], listen[1]
	}
	go func() {
		o.done <- operator.Run(ctx, operator.Options{
			MetricsListen: metricsAddr, HealthListen: healthAddr,
			Kubeconfig: kubeconfig, Namespace: opNS, ClusterID: consumerID,
			LeaderElect: true, LeaseName: "liqo-relay-operator", Identity: id,
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			Logger: log,
		})
	}()
	t.Cleanup(func() { o.stop(t) })
	return o
}

func (o *op) stop(t *testing.T) {
	if o.cancel == nil {
		return
	}
	o.cancel()
	if err := <-o.done; err != nil {
		t.Errorf("operator %s: %v", o.id, err)
	}
	o.cancel = nil
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func get(t *testing.T, url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type testWriter struct{ t *testing.T }

var logMu sync.Mutex

func (w testWriter) Write(b []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func (cs *consumer) leaseHolder(t *testing.T) string {
	out, _ := cs.c.KubectlErr("-n", opNS, "get", "lease", "liqo-relay-operator", "-o", "jsonpath={.spec.holderIdentity}")
	return strings.TrimSpace(out)
}

func peersIn(t *testing.T, p *provider) []v1alpha1.RelayPeer {
	list, err := p.rc.ListRelayPeers(context.Background(), tenantInP, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func hasPath(rp v1alpha1.RelayPeer, name string) bool {
	for _, p := range rp.Spec.Paths {
		if p.Name == name {
			return true
		}
	}
	return false
}

func (cs *consumer) relayIPs(t *testing.T) []string {
	list, err := cs.dyn.Resource(liqo.IPs).Namespace(opNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

// overlay is the FCC's record of the relays' overlay addresses.
func (cs *consumer) overlay(t *testing.T) string {
	f := cs.fcc(t, "a-b")
	return f.Status.OverlayA + " " + f.Status.OverlayB
}

func (cs *consumer) fcc(t *testing.T, name string) *v1alpha1.ForeignClusterConnection {
	list, err := cs.rc.ListFCCs(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Name == name {
			return &list.Items[i]
		}
	}
	return nil
}
