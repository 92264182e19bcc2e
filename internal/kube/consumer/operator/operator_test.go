package operator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
	"github.com/liqo-relay/relay/test/k8s/liqofake"
)

// TestOperatorOnThreeAPIServers runs the operator, as a ServiceAccount
// bound to manifests/rbac/operator-role.yaml, against a consumer API
// server with Liqo's objects for two providers, each a real API server
// where it acts through a token bound to operator-provider-role.yaml. Two
// replicas run; the leader is stopped in the middle of provisioning (the
// consumer-path IPs waiting for the IPAM), and later the survivor is
// restarted: no object is duplicated and no address renumbered.
func TestOperatorOnThreeAPIServers(t *testing.T) {
	w := startThree(t)
	a, b, cs := w.a, w.b, w.cs
	op2, ipsBefore := provisionAcrossLeaderChange(t, w)
	pa := peersIn(t, a)[0]
	pb := peersIn(t, b)[0]
	checkRelayPeers(t, pa, pb)
	checkConnected(t, w, pa, pb)

	// Restart: a new replica after op2, then pod churn.
	rvA := pa.ResourceVersion
	op2.stop(t)
	metricsAddr, healthAddr := freeAddr(t), freeAddr(t)
	startOperator(t, w.kc, "op3", metricsAddr, healthAddr)
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
	checkKeyRotation(t, w, metricsAddr)

	// A hand-deleted RelayPeer comes back.
	if err := b.rc.DeleteRelayPeer(context.Background(), tenantInP, pb.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, "RelayPeer recreated", func() (bool, string) { return len(peersIn(t, b)) == 1, "" })

	// Deletion removes both RelayPeers and the IPs.
	w.cs.c.Kubectl(t, "delete", "fcc", "a-b", "--wait=false")
	eventually(t, "cleaned up", func() (bool, string) {
		pa, pb, ips := peersIn(t, a), peersIn(t, b), cs.relayIPs(t)
		return len(pa) == 0 && len(pb) == 0 && len(ips) == 0 && cs.fcc(t, "a-b") == nil,
			fmt.Sprintf("a %d, b %d, ips %v", len(pa), len(pb), ips)
	})
}

// overlays are the overlay addresses the two Relays publish.
const overlays = "100.80.0.1 100.80.0.2"

// three is the test's consumer with its two providers, a stand-in IPAM
// that runs until the test ends, and the kubeconfig of the operator's own
// RBAC in the consumer.
type three struct {
	a, b *provider
	cs   *consumer
	kc   string
}

func startThree(t *testing.T) *three {
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
	return &three{a: a, b: b, cs: cs, kc: liqofake.OperatorAccess(t, cc, opNS)}
}

// provisionAcrossLeaderChange starts two replicas and the FCC, stops the
// leader while the consumer-path IPs wait for the IPAM, and lets the
// standby finish: it keeps the IPs the first leader made. It returns the
// new leader and those IPs.
func provisionAcrossLeaderChange(t *testing.T, w *three) (*op, []string) {
	a, b, cs := w.a, w.b, w.cs
	op1 := startOperator(t, w.kc, "op1")
	eventually(t, "op1 leads", func() (bool, string) { h := cs.leaseHolder(t); return h == "op1", h })
	op2 := startOperator(t, w.kc, "op2") // a standby

	cs.c.KubectlIn(t, `apiVersion: relay.liqo-relay.io/v1alpha1
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
	return op2, ipsBefore
}

// checkRelayPeers checks what the operator wrote into each provider for
// the other: names, keys, the mapping and the field manager.
func checkRelayPeers(t *testing.T, pa, pb v1alpha1.RelayPeer) {
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
}

// checkConnected lets both relays report and waits for the FCC to be
// Connected, as kubectl shows it; its pair of clusters is immutable.
func checkConnected(t *testing.T, w *three, pa, pb v1alpha1.RelayPeer) {
	for _, x := range []struct {
		p    *provider
		name string
	}{{w.a, pa.Name}, {w.b, pb.Name}} {
		if err := x.p.rc.ApplyRelayPeerStatus(context.Background(), tenantInP, x.name, v1alpha1.RelayPeerStatus{
			ActivePath: "direct", Reachable: true, RTT: "2ms"}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "Connected", func() (bool, string) {
		f := w.cs.fcc(t, "a-b")
		return f.Status.Phase == v1alpha1.PhaseConnected && f.Status.AToB.ActivePath == "direct", fmt.Sprintf("%+v", f.Status)
	})
	cc := w.cs.c
	out := cc.Kubectl(t, "get", "fcc")
	if !strings.Contains(out, "Connected") || !strings.Contains(out, "A->B") {
		t.Errorf("kubectl get fcc:\n%s", out)
	}
	t.Logf("kubectl get fcc:\n%s", out)

	// The pair is immutable (what was written is named after it).
	if out, err := cc.KubectlErr("patch", "fcc", "a-b", "--type=merge", "-p", `{"spec":{"clusterB":"prov-x"}}`); err == nil || !strings.Contains(out, "clusterB is immutable") {
		t.Errorf("changing spec.clusterB: err %v, %s", err, out)
	}
}

// checkKeyRotation rotates B's key and waits for it in A's RelayPeer for
// B; the leader's /metrics at metricsAddr counts the writes.
func checkKeyRotation(t *testing.T, w *three, metricsAddr string) {
	if err := w.b.rc.ApplyRelayStatus(context.Background(), tenantInP, "relay", v1alpha1.RelayStatus{
		PublicKey: keyB2, Addresses: []string{"100.80.0.2/32"}, Endpoints: []string{"relay.prov-b.example:51900"}, ListenPort: 51900, Ready: true,
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "new key in a", func() (bool, string) {
		p := peersIn(t, w.a)
		return len(p) == 1 && p[0].Spec.PublicKey == keyB2, fmt.Sprintf("%v", p)
	})
	_, metrics := get(t, "http://"+metricsAddr+"/metrics")
	for _, want := range []string{`relay_operator_leader 1`, `relay_operator_provider_writes_total{kind="RelayPeer"}`, `relay_operator_reconciles_total{result="ok"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}
