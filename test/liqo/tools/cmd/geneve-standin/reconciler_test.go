package main

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
)

// fakeLinks records what the reconciler asks the kernel for.
type fakeLinks struct {
	calls [][]geneveplan.End
	err   error
}

func (f *fakeLinks) Sync(want []geneveplan.End) (geneveplan.Changes, error) {
	f.calls = append(f.calls, want)
	return geneveplan.Changes{Create: want}, f.err
}

const tenantNS = "liqo-tenant-provider-a"

// cluster is two nodes and one gateway (remote cluster provider-a) as
// Liqo's controller-manager and fabric leave them; the gateway pod runs on
// n1, and a second tenant's tunnel exists that neither role may pick up
// for the wrong namespace.
func cluster() []client.Object {
	in := func(name, dev, ip, local, remote string) *networkingv1beta1.InternalNode {
		n := &networkingv1beta1.InternalNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
		n.Spec.Interface.Gateway.Name = dev
		n.Spec.Interface.Node.IP = networkingv1beta1.IP(ip)
		if local != "" {
			n.Status.NodeIP.Local = ptr.To(networkingv1beta1.IP(local))
		}
		if remote != "" {
			n.Status.NodeIP.Remote = ptr.To(networkingv1beta1.IP(remote))
		}
		return n
	}
	fab := func(ns, name, dev, gwIP, podIP string) *networkingv1beta1.InternalFabric {
		f := &networkingv1beta1.InternalFabric{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		f.Spec.Interface.Node.Name = dev
		f.Spec.Interface.Gateway.IP = networkingv1beta1.IP(gwIP)
		f.Spec.GatewayIP = networkingv1beta1.IP(podIP)
		f.Spec.MTU = 1340
		return f
	}
	gt := func(ns, fabric, node string, id uint32) *networkingv1beta1.GeneveTunnel {
		return &networkingv1beta1.GeneveTunnel{
			ObjectMeta: metav1.ObjectMeta{Name: fabric + "-" + node, Namespace: ns,
				Labels: map[string]string{consts.InternalFabricName: fabric, consts.InternalNodeName: node}},
			Spec: networkingv1beta1.GeneveTunnelSpec{ID: id,
				InternalNodeRef:   &corev1.ObjectReference{Name: node},
				InternalFabricRef: &corev1.ObjectReference{Name: fabric, Namespace: ns}},
		}
	}
	return []client.Object{
		in("n1", "liqo.gwn1xxxxxx", "10.80.0.1", "10.244.1.1", "172.18.0.2"),
		in("n2", "liqo.gwn2xxxxxx", "10.80.0.2", "", "172.18.0.3"),
		fab(tenantNS, "provider-a", "liqo.nodeaxxxxx", "10.80.0.4", "10.244.1.7"),
		fab("liqo-tenant-provider-b", "provider-b", "liqo.nodebxxxxx", "10.80.0.5", "10.244.2.9"),
		gt(tenantNS, "provider-a", "n1", 0),
		gt(tenantNS, "provider-a", "n2", 1),
		gt("liqo-tenant-provider-b", "provider-b", "n1", 2),
		gt("liqo-tenant-provider-b", "provider-b", "n2", 3),
	}
}

func fakeClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := networkingv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestGatewayReconcile(t *testing.T) {
	links := &fakeLinks{}
	r := &endsReconciler{cl: fakeClient(t, cluster()...), links: links, log: quietLog(),
		plan: gatewayPlanner(tenantNS, "n1", geneveplan.Options{Port: 6091})}
	res, err := r.Reconcile(context.Background(), syncKey)
	if err != nil || res.RequeueAfter != resyncPeriod {
		t.Fatalf("Reconcile: %+v, %v", res, err)
	}
	want := []geneveplan.End{
		{Name: "liqo.gwn1xxxxxx", VNI: 0, Local: ip("10.80.0.4"), Remote: ip("10.244.1.1"), Port: 6091, MTU: 1340,
			Tunnel: tenantNS + "/provider-a-n1"},
		{Name: "liqo.gwn2xxxxxx", VNI: 1, Local: ip("10.80.0.4"), Remote: ip("172.18.0.3"), Port: 6091, MTU: 1340,
			Tunnel: tenantNS + "/provider-a-n2"},
	}
	if len(links.calls) != 1 || !reflect.DeepEqual(links.calls[0], want) {
		t.Fatalf("synced %+v\nwant %+v", links.calls, want)
	}
}

func TestNodeReconcile(t *testing.T) {
	links := &fakeLinks{}
	r := &endsReconciler{cl: fakeClient(t, cluster()...), links: links, log: quietLog(),
		plan: nodePlanner("n2", geneveplan.Options{Port: 6091})}
	if _, err := r.Reconcile(context.Background(), syncKey); err != nil {
		t.Fatal(err)
	}
	want := []geneveplan.End{
		{Name: "liqo.nodeaxxxxx", VNI: 1, Local: ip("10.80.0.2"), Remote: ip("10.244.1.7"), Port: 6091, MTU: 1340,
			Tunnel: tenantNS + "/provider-a-n2"},
		{Name: "liqo.nodebxxxxx", VNI: 3, Local: ip("10.80.0.2"), Remote: ip("10.244.2.9"), Port: 6091, MTU: 1340,
			Tunnel: "liqo-tenant-provider-b/provider-b-n2"},
	}
	if len(links.calls) != 1 || !reflect.DeepEqual(links.calls[0], want) {
		t.Fatalf("synced %+v\nwant %+v", links.calls, want)
	}
}

// With no objects the reconciler still syncs, to an empty set: devices
// left by an earlier run go.
func TestReconcileEmpty(t *testing.T) {
	links := &fakeLinks{}
	r := &endsReconciler{cl: fakeClient(t), links: links, log: quietLog(),
		plan: nodePlanner("n1", geneveplan.Options{Port: 6091})}
	if _, err := r.Reconcile(context.Background(), syncKey); err != nil {
		t.Fatal(err)
	}
	if len(links.calls) != 1 || len(links.calls[0]) != 0 {
		t.Fatalf("synced %+v", links.calls)
	}
}

// A kernel error is returned, so controller-runtime retries with backoff.
func TestReconcileSyncError(t *testing.T) {
	boom := errors.New("boom")
	r := &endsReconciler{cl: fakeClient(t, cluster()...), links: &fakeLinks{err: boom}, log: quietLog(),
		plan: nodePlanner("n1", geneveplan.Options{Port: 6091})}
	if _, err := r.Reconcile(context.Background(), syncKey); !errors.Is(err, boom) {
		t.Fatalf("Reconcile: %v, want boom", err)
	}
}

// setup registers with a manager: the builder takes the watches without a
// For(), and the start channel. Nothing talks to an API server until Start.
func TestSetupRegisters(t *testing.T) {
	s := runtime.NewScheme()
	if err := networkingv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme: s, Metrics: server.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &endsReconciler{cl: mgr.GetClient(), links: &fakeLinks{}, log: quietLog(),
		plan: nodePlanner("n1", geneveplan.Options{Port: 6091})}
	if err := r.setup(mgr, "geneve-standin-test", predicate.NewPredicateFuncs(func(client.Object) bool { return true })); err != nil {
		t.Fatal(err)
	}
}
