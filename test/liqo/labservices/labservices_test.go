package labservices

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

func lbService(name, lbIP string, status ...string) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: lbIP, ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"}},
	}
	for _, ip := range status {
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return s
}

// lbWorld is the controller over a fake clientset whose informer store is
// filled by hand, so that a test syncs keys itself, in order.
type lbWorld struct {
	t      *testing.T
	client *fake.Clientset
	store  func(*corev1.Service)
	idx    cache.Indexer
	lb     *LoadBalancers
	router *FakeRouter
}

func newLBWorld(t *testing.T, objs ...*corev1.Service) *lbWorld {
	w := &lbWorld{t: t, client: fake.NewClientset(), router: &FakeRouter{}}
	f := informers.NewSharedInformerFactory(w.client, 0)
	a := netip.MustParseAddr
	w.lb = NewLoadBalancers(w.client, f, NewPool(a("10.210.1.200"), a("10.210.1.201")), w.router, slog.New(slog.DiscardHandler))
	w.idx = f.Core().V1().Services().Informer().GetIndexer()
	w.store = func(s *corev1.Service) {
		if err := w.idx.Update(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range objs {
		if _, err := w.client.CoreV1().Services(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		w.store(s)
	}
	return w
}

func (w *lbWorld) sync(name string) {
	w.t.Helper()
	if err := w.lb.Sync(context.Background(), "liqo/"+name); err != nil {
		w.t.Fatalf("Sync(%s): %v", name, err)
	}
}

func (w *lbWorld) status(name string) []string {
	s, err := w.client.CoreV1().Services("liqo").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	var ips []string
	for _, in := range s.Status.LoadBalancer.Ingress {
		ips = append(ips, in.IP)
	}
	return ips
}

func TestLoadBalancerAssignsRoutesAndReleases(t *testing.T) {
	w := newLBWorld(t, lbService("gw-a", ""), lbService("gw-b", "10.210.1.201"))
	w.sync("gw-b")
	w.sync("gw-a")
	if got := w.status("gw-b"); !slices.Equal(got, []string{"10.210.1.201"}) {
		t.Errorf("gw-b asked for 10.210.1.201 and got %v", got)
	}
	if got := w.status("gw-a"); !slices.Equal(got, []string{"10.210.1.200"}) {
		t.Errorf("gw-a got %v, want the free 10.210.1.200", got)
	}
	if !w.router.Has(netip.MustParseAddr("10.210.1.200")) || !w.router.Has(netip.MustParseAddr("10.210.1.201")) {
		t.Error("assigned addresses are not routed")
	}
	// A sync with nothing changed writes nothing.
	before := len(w.client.Actions())
	s, _ := w.client.CoreV1().Services("liqo").Get(context.Background(), "gw-a", metav1.GetOptions{})
	w.store(s)
	w.sync("gw-a")
	for _, a := range w.client.Actions()[before:] {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			t.Errorf("an idempotent sync wrote: %v", a)
		}
	}
	// Turning it into a ClusterIP Service releases the address and clears
	// the status.
	s = s.DeepCopy()
	s.Spec.Type = corev1.ServiceTypeClusterIP
	w.store(s)
	w.sync("gw-a")
	if w.router.Has(netip.MustParseAddr("10.210.1.200")) {
		t.Error("the released address is still routed")
	}
	if got := w.status("gw-a"); len(got) != 0 {
		t.Errorf("a ClusterIP Service keeps the ingress %v", got)
	}
}

func TestLoadBalancerMovesAndDropsStaleRoutes(t *testing.T) {
	a := netip.MustParseAddr
	w := newLBWorld(t, lbService("gw", ""))
	w.sync("gw")
	// Asking for another address moves the route.
	s, _ := w.client.CoreV1().Services("liqo").Get(context.Background(), "gw", metav1.GetOptions{})
	s = s.DeepCopy()
	s.Spec.LoadBalancerIP = "10.210.1.201"
	w.store(s)
	w.sync("gw")
	if w.router.Has(a("10.210.1.200")) || !w.router.Has(a("10.210.1.201")) {
		t.Errorf("after the move: 10.210.1.200 routed %v, 10.210.1.201 routed %v", w.router.Has(a("10.210.1.200")), w.router.Has(a("10.210.1.201")))
	}
	// A route left by a Service that went while the controller was down is
	// dropped at start; one a Service still holds stays.
	_ = w.router.Route(context.Background(), a("10.210.1.200"))
	s, _ = w.client.CoreV1().Services("liqo").Get(context.Background(), "gw", metav1.GetOptions{})
	w.lb.pool = NewPool(a("10.210.1.200"), a("10.210.1.201"))
	if _, err := w.lb.pool.Take("liqo/gw", ingressAddr(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.lb.dropStaleRoutes(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.router.Has(a("10.210.1.200")) || !w.router.Has(a("10.210.1.201")) {
		t.Errorf("after the restart: stale 10.210.1.200 routed %v, held 10.210.1.201 routed %v", w.router.Has(a("10.210.1.200")), w.router.Has(a("10.210.1.201")))
	}
	// Deleting the Service removes its route.
	if err := w.idx.Delete(s); err != nil {
		t.Fatal(err)
	}
	w.sync("gw")
	if w.router.Has(a("10.210.1.201")) {
		t.Error("a deleted Service's address is still routed")
	}
}

func TestLoadBalancerRefusesClearly(t *testing.T) {
	w := newLBWorld(t, lbService("outside", "192.0.2.1"))
	err := w.lb.Sync(context.Background(), "liqo/outside")
	if err == nil || err.Error() != "service liqo/outside: address 192.0.2.1 is outside the pool 10.210.1.200-10.210.1.201" {
		t.Errorf("Sync of an address outside the pool: %v", err)
	}
	class := "example.com/other"
	other := lbService("other", "")
	other.Spec.LoadBalancerClass = &class
	w.store(other)
	if err := w.lb.Sync(context.Background(), "liqo/other"); err != nil {
		t.Errorf("a Service of another class: %v", err)
	}
	if _, ok := w.lb.pool.Owned("liqo/other"); ok {
		t.Error("a Service of another load-balancer class got an address")
	}
}

func TestDNSLookup(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	d := NewDNS("cluster.local", f, slog.New(slog.DiscardHandler))
	svc := f.Core().V1().Services().Informer().GetIndexer()
	eps := f.Discovery().V1().EndpointSlices().Informer().GetIndexer()
	_ = svc.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: "liqo-ipam"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"}}})
	_ = svc.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: "headless"},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}})
	no := false
	_ = eps.Add(&discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: "headless-x", Labels: map[string]string{discoveryv1.LabelServiceName: "headless"}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.1.5"}},
			{Addresses: []string{"10.244.1.6"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}},
		},
	})
	for _, c := range []struct {
		name  string
		found bool
		want  []string
	}{
		{"liqo-ipam.liqo.svc.cluster.local.", true, []string{"10.96.0.20"}},
		{"LIQO-IPAM.liqo.svc.Cluster.Local", true, []string{"10.96.0.20"}},
		{"headless.liqo.svc.cluster.local.", true, []string{"10.244.1.5"}},
		{"missing.liqo.svc.cluster.local.", false, nil},
		{"liqo-ipam.liqo.cluster.local.", false, nil},
		{"liqo-ipam.liqo.", false, nil},
		{"example.com.", false, nil},
	} {
		addrs, found := d.Lookup(c.name)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		if found != c.found || !slices.Equal(got, c.want) {
			t.Errorf("Lookup(%s) = %v, %v; want %v, %v", c.name, got, found, c.want, c.found)
		}
	}
}
