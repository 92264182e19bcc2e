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
		time.Sleep(200 * time.Millisecond)
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

// TestOperatorOnThreeAPIServers runs the operator, as a ServiceAccount
// bound to manifests/rbac/operator-role.yaml, against a consumer API
// server with Liqo's objects for two providers, each a real API server
// where it acts through a token bound to operator-provider-role.yaml. Two
// replicas run; the leader is stopped in the middle of provisioning (the
// consumer-path IPs waiting for the IPAM), and later the survivor is
// restarted: no object is duplicated and no address renumbered.
func TestOperatorOnThreeAPIServers(t *testing.T) {
	a := startProvider(t, "prov-a", keyA, "100.80.0.1/32", "10.0.0.100", "10.90.0.0/16")
	b := startProvider(t, "prov-b", keyB, "100.80.0.2/32", "10.0.0.200", "10.91.0.0/16")
	cc := k8stest.Start(t, "consumer", "")
	liqofake.InstallCRDs(t, cc)
	cs := &consumer{c: cc}
	var err error
	if cs.dyn, err = dynamic.NewForConfig(cc.Config(t)); err != nil {
		t.Fatal(err)
	}
	if cs.rc, err = client.New(cc.Config(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ipamDone := make(chan struct{})
	go func() { defer close(ipamDone); cs.ipam(ctx) }()
	t.Cleanup(func() { cancel(); <-ipamDone })

	cc.Kubectl(t, "create", "namespace", opNS)
	cc.Kubectl(t, "create", "namespace", "apps")
	cs.addProvider(t, a, "10.70.0.0/16")
	cs.addProvider(t, b, "10.71.0.0/16")
	cs.offload(t, "pa1", "10.70.0.5")
	cs.offload(t, "pb1", "10.71.0.7")
	// The operator runs with its own RBAC, not as admin.
	kc := liqofake.OperatorAccess(t, cc, opNS)

	op1 := startOperator(t, kc, "op1")
	eventually(t, "op1 leads", func() (bool, string) { h := cs.leaseHolder(t); return h == "op1", h })
	op2 := startOperator(t, kc, "op2") // a standby

	cc.KubectlIn(t, `apiVersion: relay.liqo-relay.io/v1alpha1
kind: ForeignClusterConnection
metadata: {name: a-b}
spec: {clusterA: prov-a, clusterB: prov-b}
`, "apply", "-f", "-")

	// Provisioning, half done: the RelayPeers have the direct path, the
	// consumer-path IPs wait for the IPAM.
	eventually(t, "first RelayPeers and IPs", func() (bool, string) {
		pa, pb, ips := peersIn(t, a), peersIn(t, b), cs.relayIPs(t)
		return len(pa) == 1 && len(pb) == 1 && len(ips) == 2, fmt.Sprintf("a %d, b %d, ips %v", len(pa), len(pb), ips)
	})
	ipsBefore := cs.relayIPs(t)
	const overlays = "100.80.0.1 100.80.0.2" // what the Relays publish
	if f := cs.fcc(t, "a-b"); f.Status.Phase != v1alpha1.PhaseProvisioning && f.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("phase while the IPAM waits = %s", f.Status.Phase)
	}

	// Leader change in the middle of provisioning.
	op1.stop(t)
	eventually(t, "op2 leads", func() (bool, string) { h := cs.leaseHolder(t); return h == "op2", h })
	cs.ipamOn.Store(true)
	eventually(t, "consumer paths", func() (bool, string) {
		pa, pb := peersIn(t, a), peersIn(t, b)
		ok := len(pa) == 1 && len(pb) == 1 && hasPath(pa[0], "consumer") && hasPath(pb[0], "consumer")
		return ok, fmt.Sprintf("a %+v, b %+v", pa, pb)
	})
	if ips := cs.relayIPs(t); !slices.Equal(ips, ipsBefore) {
		t.Errorf("IPs after the leader change = %v, before %v", ips, ipsBefore)
	}
	eventually(t, "the FCC records the published overlay addresses after the leader change", func() (bool, string) {
		o := cs.overlay(t)
		return o == overlays, o
	})

	pa := peersIn(t, a)[0]
	pb := peersIn(t, b)[0]
	if pa.Name != consumerID+"-prov-b" || pa.Spec.PublicKey != keyB || pb.Spec.PublicKey != keyA {
		t.Errorf("RelayPeers: a has %s key %s, b has %s key %s", pa.Name, pa.Spec.PublicKey, pb.Name, pb.Spec.PublicKey)
	}
	// A's pods reach pb1 (ext 10.80.x.y) at 10.90.x.y; pa1 (real
	// 10.0.0.5) is seen by B in 10.91/16.
	if len(pa.Spec.SeesUs) != 1 || pa.Spec.SeesUs[0].Real != "10.0.0.5/32" || !strings.HasPrefix(string(pa.Spec.SeesUs[0].As), "10.91.") {
		t.Errorf("a's seesUs = %v", pa.Spec.SeesUs)
	}
	if len(pa.Spec.Prefixes) != 2 || pa.Spec.Prefixes[0] != "100.80.0.2/32" || !strings.HasPrefix(string(pa.Spec.Prefixes[1]), "10.90.") {
		t.Errorf("a's prefixes = %v", pa.Spec.Prefixes)
	}
	if got := pa.GetManagedFields(); len(got) == 0 || got[0].Manager != client.OperatorFieldManager {
		t.Errorf("a's RelayPeer managed by %v", got)
	}

	// The relays report; the FCC is Connected.
	for _, x := range []struct {
		p    *provider
		name string
	}{{a, pa.Name}, {b, pb.Name}} {
		if err := x.p.rc.ApplyRelayPeerStatus(context.Background(), tenantInP, x.name, v1alpha1.RelayPeerStatus{
			ActivePath: "direct", Reachable: true, RTT: "2ms"}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "Connected", func() (bool, string) {
		f := cs.fcc(t, "a-b")
		return f.Status.Phase == v1alpha1.PhaseConnected && f.Status.AToB.ActivePath == "direct", fmt.Sprintf("%+v", f.Status)
	})
	out := cc.Kubectl(t, "get", "fcc")
	if !strings.Contains(out, "Connected") || !strings.Contains(out, "A->B") {
		t.Errorf("kubectl get fcc:\n%s", out)
	}
	t.Logf("kubectl get fcc:\n%s", out)

	// The pair is immutable (what was written is named after it).
	if out, err := cc.KubectlErr("patch", "fcc", "a-b", "--type=merge", "-p", `{"spec":{"clusterB":"prov-x"}}`); err == nil || !strings.Contains(out, "clusterB is immutable") {
		t.Errorf("changing spec.clusterB: err %v, %s", err, out)
	}

	// Restart: a new replica after op2, then pod churn.
	rvA := pa.ResourceVersion
	op2.stop(t)
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	startOperator(t, kc, "op3", metricsAddr, healthAddr)
	eventually(t, "op3 leads", func() (bool, string) { h := cs.leaseHolder(t); return h == "op3", h })
	eventually(t, "op3 ready", func() (bool, string) {
		code, body := get(t, "http://"+healthAddr+"/readyz")
		return code == 200, body
	})
	cs.offload(t, "pb2", "10.71.3.9")
	eventually(t, "churn reaches a", func() (bool, string) {
		p := peersIn(t, a)
		return len(p) == 1 && len(p[0].Spec.Prefixes) == 3, fmt.Sprintf("%v", p)
	})
	pa2 := peersIn(t, a)[0]
	if pa2.ResourceVersion == rvA || pa2.Spec.Prefixes[0] != pa.Spec.Prefixes[0] {
		t.Errorf("after restart: overlay prefix %s, was %s", pa2.Spec.Prefixes[0], pa.Spec.Prefixes[0])
	}
	if ips := cs.relayIPs(t); !slices.Equal(ips, ipsBefore) {
		t.Errorf("IPs after restart = %v, before %v", ips, ipsBefore)
	}
	eventually(t, "the FCC records the published overlay addresses after the restart", func() (bool, string) {
		o := cs.overlay(t)
		return o == overlays, o
	})

	// A key rotation in B reaches A's RelayPeer for B.
	if err := b.rc.ApplyRelayStatus(context.Background(), tenantInP, "relay", v1alpha1.RelayStatus{
		PublicKey: keyB2, Addresses: []string{"100.80.0.2/32"}, Endpoints: []string{"relay.prov-b.example:51900"}, ListenPort: 51900, Ready: true,
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "new key in a", func() (bool, string) {
		p := peersIn(t, a)
		return len(p) == 1 && p[0].Spec.PublicKey == keyB2, fmt.Sprintf("%v", p)
	})
	_, metrics := get(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{`relay_operator_leader 1`, `relay_operator_provider_writes_total{kind="RelayPeer"}`, `relay_operator_reconciles_total{result="ok"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}

	// A hand-deleted RelayPeer comes back.
	if err := b.rc.DeleteRelayPeer(context.Background(), tenantInP, pb.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, "RelayPeer recreated", func() (bool, string) { return len(peersIn(t, b)) == 1, "" })

	// Deletion removes both RelayPeers and the IPs.
	cc.Kubectl(t, "delete", "fcc", "a-b", "--wait=false")
	eventually(t, "cleaned up", func() (bool, string) {
		pa, pb, ips := peersIn(t, a), peersIn(t, b), cs.relayIPs(t)
		return len(pa) == 0 && len(pb) == 0 && len(ips) == 0 && cs.fcc(t, "a-b") == nil,
			fmt.Sprintf("a %d, b %d, ips %v", len(pa), len(pb), ips)
	})
}
