package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/testbed/netns"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
	"github.com/liqo-relay/relay/test/k8s/liqofake"
)

// The world of TestE2EFCC and of `make demo-k8s` (TestDemoK8s): the
// namespace model of Liqo's data path (liqomodel.go), a real API server
// per provider inside its gateway pod's namespace (kube_test.go), a
// consumer API server with Liqo's objects for both peerings
// (test/k8s/liqofake), the relays in TUN mode with `relay run
// --kubeconfig`, and `relay operator` against the consumer.

// fccConsumerID is the consumer's Liqo cluster ID. The providers' tenant
// namespace for it is kubeNamespace, where their relays run.
const fccConsumerID = "cons-c"

// fccSide is one provider of the FCC world.
type fccSide struct {
	lq    *lqProvider
	side  *Side
	prov  *Provider
	relay *Relay
	// peerName is its RelayPeer for the other provider, as the operator
	// names it.
	peerName string
}

// fccWorld is the whole world.
type fccWorld struct {
	m        *lqModel
	a, b     *fccSide
	consumer *k8stest.Cluster
	dyn      dynamic.Interface
	rc       *client.Client
	opKube   string // the operator's kubeconfig (Role-bound token)
	operator *netns.Proc
}

// newFCCWorld builds the model, the three API servers with Liqo's
// objects, and starts the relays (their Relays declare the direct
// endpoints) and the operator. No FCC exists yet.
func newFCCWorld(t *testing.T) *fccWorld {
	t.Helper()
	w := &fccWorld{m: newLiqoModel(t)}
	sa, sb := w.m.lqSides()
	w.a = &fccSide{lq: w.m.a, side: sa, peerName: fccConsumerID + "-" + w.m.b.name}
	w.b = &fccSide{lq: w.m.b, side: sb, peerName: fccConsumerID + "-" + w.m.a.name}

	// The consumer: Liqo's peerings with both providers, the offloaded
	// pods' IPs and the IPAM stand-in, which gives every IP the ext the
	// model's nft mappings use.
	w.consumer = k8stest.Start(t, "consumer", "")
	liqofake.InstallCRDs(t, w.consumer)
	var err error
	if w.dyn, err = dynamic.NewForConfig(w.consumer.Config(t)); err != nil {
		t.Fatal(err)
	}
	if w.rc, err = client.New(w.consumer.Config(t)); err != nil {
		t.Fatal(err)
	}
	w.consumer.Kubectl(t, "create", "namespace", kubeNamespace)
	w.consumer.Kubectl(t, "create", "namespace", "apps")
	ext := map[string]string{}
	for _, ip := range w.m.ips {
		ext[ip.spec] = ip.status
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ipam sync.WaitGroup
	ipam.Go(func() {
		liqofake.IPAM(ctx, w.dyn, lqExtCIDR, func(o *unstructured.Unstructured) (string, bool) {
			spec, _, _ := unstructured.NestedString(o.Object, "spec", "ip")
			s, ok := ext[spec]
			return s, ok
		})
	})
	t.Cleanup(func() { cancel(); ipam.Wait() })

	for _, s := range []*fccSide{w.a, w.b} {
		w.startProvider(t, s)
	}
	for _, s := range []*fccSide{w.a, w.b} {
		for i, pod := range s.lq.pods {
			liqofake.OffloadedPod(t, w.dyn, "apps", fmt.Sprintf("%s-pod%d", s.lq.name, i), s.lq.cView(pod.ip))
		}
	}
	w.opKube = liqofake.OperatorAccess(t, w.consumer, kubeNamespace)

	w.a.relay = w.startRelay(t, w.a, w.b)
	w.b.relay = w.startRelay(t, w.b, w.a)
	w.startOperator(t)
	return w
}

// startProvider starts s's API server in its gateway pod, with Liqo's
// objects there for the consumer (its Configuration and GatewayServer),
// the operator's access, and the peering in the consumer.
func (w *fccWorld) startProvider(t *testing.T, s *fccSide) {
	t.Helper()
	lp := s.lq
	s.prov = StartProvider(t, s.side)
	c := s.prov.Cluster
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(k8stest.Root(), "test", "fixtures", "liqo-v1.2.0", "crds"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/configurations.networking.liqo.io", "crd/gatewayservers.networking.liqo.io")
	pdyn, err := dynamic.NewForConfig(c.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	// The provider's Configuration for C: C's pods and external CIDR, as
	// this provider remaps them.
	liqofake.Configuration(t, pdyn, kubeNamespace, fccConsumerID, fccConsumerID,
		liqofake.CIDRs{Pod: lqPodCIDR, External: lqExtCIDR}, liqofake.CIDRs{Pod: lp.cfg.remotePod.spec, External: lp.cfg.remoteExt.spec},
		liqofake.CIDRs{Pod: lp.cfg.remotePod.status, External: lp.cfg.remoteExt.status})
	liqofake.GatewayServer(t, pdyn, kubeNamespace, fccConsumerID, lp.gwIP)
	// The relay's Relay, declared with its direct endpoint (as the chart
	// would); the relay fills its status.
	c.KubectlIn(t, fmt.Sprintf(`apiVersion: relay.liqo-relay.io/v1alpha1
kind: Relay
metadata: {name: %s, namespace: %s, labels: {%s: %s}}
spec: {endpoints: ["%s:%d"]}
`, lp.name, kubeNamespace, v1alpha1.RelayLabel, lp.name, lp.direct, relayPort), "apply", "-f", "-")

	// In C: the peering, with the operator's credentials for this
	// provider (through the forwarder on this process's loopback), and
	// C's Configuration for the provider.
	kc := liqofake.ProviderAccess(t, c, kubeNamespace)
	tenant := liqofake.Peering(t, w.consumer, w.dyn, lp.name, kubeNamespace, kc)
	liqofake.Configuration(t, w.dyn, tenant, lp.name, lp.name,
		liqofake.CIDRs{Pod: lqPodCIDR, External: lqExtCIDR}, liqofake.CIDRs{Pod: lp.cSees.remotePod.spec, External: lp.cSees.remoteExt.spec},
		liqofake.CIDRs{Pod: lp.cSees.remotePod.status, External: lp.cSees.remoteExt.status})
}

// startRelay runs s's relay in its gateway pod: TUN mode, the liqo
// section, `relay run --kubeconfig` against s's own API server, no peers
// until the operator writes them.
func (w *fccWorld) startRelay(t *testing.T, s, peer *fccSide) *Relay {
	t.Helper()
	ps := *peer.side
	ps.Name = s.peerName // the relay names its peer after the RelayPeer
	r := lqStartKubeRelay(t, s.prov, s.lq, &ps)
	s.prov.PublishedKey(t)
	return r
}

// startOperator runs `relay operator` against the consumer, as its
// ServiceAccount, with fast leader election.
func (w *fccWorld) startOperator(t *testing.T) {
	t.Helper()
	w.operator = netns.StartHost(t, "relay operator", relayBin(t), "operator", "--kubeconfig", w.opKube,
		"--namespace", kubeNamespace, "--cluster-id", fccConsumerID, "--leader-elect=false",
		"--metrics-listen", "", "--health-listen", "")
	t.Cleanup(func() {
		if err := w.operator.Stop(syscall.SIGTERM); err != nil {
			t.Errorf("relay operator: %v", err)
		}
	})
}

// applyFCC creates the FCC connecting A and B.
func (w *fccWorld) applyFCC(t *testing.T, name string) {
	t.Helper()
	w.consumer.KubectlIn(t, fmt.Sprintf(`apiVersion: relay.liqo-relay.io/v1alpha1
kind: ForeignClusterConnection
metadata: {name: %s}
spec: {clusterA: %s, clusterB: %s}
`, name, w.m.a.name, w.m.b.name), "apply", "-f", "-")
}

// fcc reads the FCC, nil when it is gone.
func (w *fccWorld) fcc(t *testing.T, name string) *v1alpha1.ForeignClusterConnection {
	t.Helper()
	list, err := w.rc.ListFCCs(context.Background(), metav1.ListOptions{})
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

// waitFCC waits until the FCC's status satisfies cond.
func (w *fccWorld) waitFCC(t *testing.T, name, what string, cond func(st v1alpha1.ForeignClusterConnectionStatus) bool) {
	t.Helper()
	waitFor(t, 60*time.Second, "FCC "+name+": "+what, func() (bool, string) {
		f := w.fcc(t, name)
		if f == nil {
			return false, "no FCC"
		}
		return cond(f.Status), fmt.Sprintf("%+v", f.Status)
	})
}

// on reports whether both directions are reachable on path.
func on(path string) func(st v1alpha1.ForeignClusterConnectionStatus) bool {
	return func(st v1alpha1.ForeignClusterConnectionStatus) bool {
		return st.AToB.Reachable && st.AToB.ActivePath == path && st.BToA.Reachable && st.BToA.ActivePath == path
	}
}

// relayPeers lists the RelayPeers in a provider.
func (s *fccSide) relayPeers(t *testing.T) []v1alpha1.RelayPeer {
	t.Helper()
	list, err := s.prov.API.ListRelayPeers(context.Background(), kubeNamespace, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
