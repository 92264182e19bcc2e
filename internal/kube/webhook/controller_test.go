package webhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

type fakeEvents struct {
	mu    sync.Mutex
	notes []string
}

func (f *fakeEvents) Eventf(regarding, _ runtime.Object, typ, reason, _, note string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := regarding.(metav1.Object)
	f.notes = append(f.notes, fmt.Sprintf("%s %s %s/%s: %s", typ, reason, m.GetNamespace(), m.GetName(), fmt.Sprintf(note, args...)))
}

type ctlFixture struct {
	ctl     *Controller
	client  *fake.Clientset
	dyn     *dynamicfake.FakeDynamicClient
	events  *fakeEvents
	metrics *Metrics
	pods    cache.Indexer
}

const gwUID = "0b0c8c3e-0d4f-4a55-9a55-6f0c8d6b1a02"

// testAnchor is the webhook configuration the fixture's controller owns
// its objects by.
var testAnchor = &admv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "liqo-relay-inject", UID: "5d1c6a9e-7f0e-4c7e-8a3b-2f6e1d0c9b8a"}}

// testOwner is the owner reference to testAnchor.
var testOwner = metav1.OwnerReference{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration", Name: testAnchor.Name, UID: testAnchor.UID}

func newCtlFixture(t *testing.T, withGateway bool, pods ...*corev1.Pod) *ctlFixture {
	t.Helper()
	var objs []runtime.Object
	if withGateway {
		gs := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.liqo.io/v1beta1", "kind": "GatewayServer",
			"metadata": map[string]any{"name": testGateway, "namespace": testNS, "uid": gwUID},
		}}
		objs = append(objs, gs)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		gatewayKinds[0].gvr: "GatewayServerList", gatewayKinds[1].gvr: "GatewayClientList", relaysGVR: "RelayList",
	}, objs...)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	f := &ctlFixture{client: fake.NewClientset(testAnchor.DeepCopy()), dyn: dyn, events: &fakeEvents{}, metrics: NewMetrics(prometheus.NewRegistry()), pods: idx}
	f.ctl = NewController(ControllerOptions{
		Client: f.client, Dynamic: dyn, Sidecar: testSidecar(t), Pods: corelisters.NewPodLister(idx),
		Anchor:    WebhookConfigAnchor(f.client, testAnchor.Name),
		ClusterID: func(context.Context) (string, error) { return testLocal, nil },
		Events:    f.events, Metrics: f.metrics, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return f
}

// gatewayPodNamed is the Liqo gateway pod, created (named, in its
// namespace), with or without the sidecar.
func gatewayPodNamed(t *testing.T, name string, injected bool) *corev1.Pod {
	p := liqoGatewayPod(t)
	if injected {
		p = injectedPod(t, p, testSidecar(t), testLocal)
	}
	p.Name, p.Namespace = name, testNS
	return p
}

func writes(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

func TestControllerCreatesGatewayObjects(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	key := testNS + "/" + testGateway
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	want := []string{"create rolebindings", "create services", "create networkpolicies", "create secrets"}
	if got := writes(f.client.Actions()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writes %v, want %v", got, want)
	}
	name := "liqo-relay-" + testGateway
	svc := checkGatewayObjects(ctx, t, f, name)
	if v := testutil.ToFloat64(f.metrics.missing.WithLabelValues(testNS, testGateway)); v != 0 {
		t.Errorf("relay_inject_missing_sidecar %v, want 0", v)
	}

	// Idempotent: a second sync writes nothing.
	f.client.ClearActions()
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := writes(f.client.Actions()); len(got) != 0 {
		t.Errorf("second sync wrote %v", got)
	}

	// Drift: someone edits the Service's selector; the sync restores it.
	svc.Spec.Selector = map[string]string{"app": "x"}
	if _, err := f.client.CoreV1().Services(testNS).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	svc, _ = f.client.CoreV1().Services(testNS).Get(ctx, name, metav1.GetOptions{})
	if svc.Spec.Selector[ActiveLabel] != "true" {
		t.Errorf("selector not restored: %v", svc.Spec.Selector)
	}
}

// checkGatewayObjects checks what a sync gives gateway testGateway: a
// RoleBinding, a UDP Service, a NetworkPolicy, a key Secret and the Relay,
// each named after it, labelled with it and owned by the anchor, the
// webhook configuration. It returns the Service.
func checkGatewayObjects(ctx context.Context, t *testing.T, f *ctlFixture, name string) *corev1.Service {
	t.Helper()
	owner := testOwner
	checkOwner := func(kind string, m metav1.Object) {
		t.Helper()
		if refs := m.GetOwnerReferences(); len(refs) != 1 || refs[0] != owner {
			t.Errorf("%s owner references %+v, want %+v", kind, refs, owner)
		}
		if l := m.GetLabels(); l["app.kubernetes.io/managed-by"] != ManagedBy || l[GatewayNameLabel] != testGateway {
			t.Errorf("%s labels %v: want the controller's, for gateway %s", kind, l, testGateway)
		}
	}
	rb, err := f.client.RbacV1().RoleBindings(testNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkOwner("RoleBinding", rb)
	if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != DefaultRole || len(rb.Subjects) != 1 ||
		rb.Subjects[0].Kind != "ServiceAccount" || rb.Subjects[0].Name != testGateway || rb.Subjects[0].Namespace != testNS {
		t.Errorf("RoleBinding %+v %+v: want ClusterRole %s bound to ServiceAccount %s/%s", rb.RoleRef, rb.Subjects, DefaultRole, testNS, testGateway)
	}
	svc, err := f.client.CoreV1().Services(testNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkOwner("Service", svc)
	if svc.Spec.Selector[ActiveLabel] != "true" || svc.Spec.Selector[GatewayNameLabel] != testGateway ||
		svc.Spec.Ports[0].Protocol != corev1.ProtocolUDP || svc.Spec.Ports[0].Port != 51900 || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Errorf("Service spec %+v", svc.Spec)
	}
	np, err := f.client.NetworkingV1().NetworkPolicies(testNS).Get(ctx, name+"-metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkOwner("NetworkPolicy", np)
	for _, r := range np.Spec.Ingress {
		for _, p := range r.Ports {
			if *p.Protocol == corev1.ProtocolTCP && p.Port.IntVal <= 9587 && *p.EndPort >= 9587 && len(r.From) == 0 {
				t.Errorf("NetworkPolicy lets anyone reach the metrics port: %+v", p)
			}
		}
	}
	sec, err := f.client.CoreV1().Secrets(testNS).Get(ctx, DefaultKeySecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkOwner("Secret", sec)
	if len(sec.Data["privateKey"]) != 44 || sec.Labels["relay.liqo-relay.io/relay"] != testLocal {
		t.Errorf("key Secret %v %v", sec.Labels, len(sec.Data["privateKey"]))
	}
	relay, err := f.dyn.Resource(relaysGVR).Namespace(testNS).Get(ctx, testLocal, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Relay %s: %v", testLocal, err)
	}
	checkOwner("Relay", relay)
	if ref, _, _ := unstructured.NestedString(relay.Object, "spec", "serviceRef", "name"); ref != name {
		t.Errorf("Relay spec.serviceRef.name %q, want %q", ref, name)
	}
	return svc
}

func TestControllerReportsMissingSidecar(t *testing.T) {
	optedOut := gatewayPodNamed(t, "gw-c", false)
	optedOut.Annotations = map[string]string{OptOutKey: "false"}
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true), gatewayPodNamed(t, "gw-b", false), optedOut)
	if err := f.ctl.sync(context.Background(), testNS+"/"+testGateway); err != nil {
		t.Fatal(err)
	}
	if v := testutil.ToFloat64(f.metrics.missing.WithLabelValues(testNS, testGateway)); v != 1 {
		t.Errorf("relay_inject_missing_sidecar %v, want 1 (gw-b; gw-c opted out)", v)
	}
	if len(f.events.notes) != 1 || !strings.Contains(f.events.notes[0], "Warning RelaySidecarMissing "+testNS+"/gw-b") {
		t.Errorf("events %q", f.events.notes)
	}
	// The pods go: the series goes.
	for _, p := range f.pods.List() {
		_ = f.pods.Delete(p)
	}
	if err := f.ctl.sync(context.Background(), testNS+"/"+testGateway); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(f.metrics.missing); n != 0 {
		t.Errorf("%d relay_inject_missing_sidecar series after the gateway went", n)
	}
}

func TestControllerWaitsForGatewayObject(t *testing.T) {
	f := newCtlFixture(t, false, gatewayPodNamed(t, "gw-a", true))
	err := f.ctl.sync(context.Background(), testNS+"/"+testGateway)
	if err == nil || !strings.Contains(err.Error(), "no GatewayServer or GatewayClient") {
		t.Fatalf("err %v", err)
	}
	if got := writes(f.client.Actions()); len(got) != 0 {
		t.Errorf("wrote %v without an owner", got)
	}
}

// TestControllerRemovesAGoneGatewaysObjects: while the gateway's
// GatewayServer exists, a gateway with no pods keeps its objects (a pod
// between two replicas, say); once it is gone, sync deletes every object
// it wrote for it, and leaves alone an object of the same name it did not
// write.
func TestControllerRemovesAGoneGatewaysObjects(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	key := testNS + "/" + testGateway
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	name := "liqo-relay-" + testGateway
	checkGatewayObjects(ctx, t, f, name)
	_ = f.pods.Delete(gatewayPodNamed(t, "gw-a", true))
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CoreV1().Services(testNS).Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatalf("no pods, the gateway still there: the Service went: %v", err)
	}
	gs := schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "gatewayservers"}
	if err := f.dyn.Resource(gs).Namespace(testNS).Delete(ctx, testGateway, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A NetworkPolicy of that name that a person wrote stays.
	if err := f.client.NetworkingV1().NetworkPolicies(testNS).Delete(ctx, name+"-metrics", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name + "-metrics", Namespace: testNS}}
	if _, err := f.client.NetworkingV1().NetworkPolicies(testNS).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.RbacV1().RoleBindings(testNS).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Error("the RoleBinding is left")
	}
	if _, err := f.client.CoreV1().Services(testNS).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Error("the Service is left")
	}
	if _, err := f.client.CoreV1().Secrets(testNS).Get(ctx, DefaultKeySecret, metav1.GetOptions{}); err == nil {
		t.Error("the key Secret is left")
	}
	if l, _ := f.dyn.Resource(relaysGVR).Namespace(testNS).List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d Relays left", len(l.Items))
	}
	if _, err := f.client.NetworkingV1().NetworkPolicies(testNS).Get(ctx, name+"-metrics", metav1.GetOptions{}); err != nil {
		t.Errorf("a NetworkPolicy the controller did not write was deleted: %v", err)
	}
}

// TestControllerWritesNothingWithoutItsAnchor: with its webhook
// configuration gone (an uninstall under way), sync fails and writes
// nothing: an object without its owner would outlive the chart.
func TestControllerWritesNothingWithoutItsAnchor(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	if err := f.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, testAnchor.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.client.ClearActions()
	err := f.ctl.sync(ctx, testNS+"/"+testGateway)
	if err == nil || !strings.Contains(err.Error(), "MutatingWebhookConfiguration liqo-relay-inject is gone") {
		t.Fatalf("err %v", err)
	}
	if got := writes(f.client.Actions()); len(got) != 0 {
		t.Errorf("wrote %v without the anchor", got)
	}
}

// TestSweepQueuesTheGatewaysWithRelays: the sweep queues the gateway of
// every Relay the controller made, and no other.
func TestSweepQueuesTheGatewaysWithRelays(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	if err := f.ctl.sync(ctx, testNS+"/"+testGateway); err != nil {
		t.Fatal(err)
	}
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "relay.liqo-relay.io/v1alpha1", "kind": "Relay",
		"metadata": map[string]any{"name": "by-hand", "namespace": "other", "labels": map[string]any{GatewayNameLabel: "x"}},
	}}
	if _, err := f.dyn.Resource(relaysGVR).Namespace("other").Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.ctl.sweep(ctx)
	if n := f.ctl.queue.Len(); n != 1 {
		t.Fatalf("%d keys queued, want 1", n)
	}
	if k, _ := f.ctl.queue.Get(); k != testNS+"/"+testGateway {
		t.Fatalf("queued %q", k)
	}
}

// TestControllerLeavesAnObjectItDidNotWrite: a Service of the relay's name
// that the controller did not write (no managed-by label of its own) is
// neither taken over nor given the anchor as owner, so the chart's
// uninstall never deletes it; the sync says why it cannot go on.
func TestControllerLeavesAnObjectItDidNotWrite(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	name := "liqo-relay-" + testGateway
	theirs := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, Labels: map[string]string{"app": "theirs"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Port: 80}}}}
	if _, err := f.client.CoreV1().Services(testNS).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := f.ctl.sync(ctx, testNS+"/"+testGateway)
	if err == nil || !strings.Contains(err.Error(), "was not made by liqo-relay-inject") {
		t.Fatalf("err %v", err)
	}
	got, _ := f.client.CoreV1().Services(testNS).Get(ctx, name, metav1.GetOptions{})
	if len(got.OwnerReferences) != 0 || got.Labels["app.kubernetes.io/managed-by"] != "" || got.Spec.Ports[0].Port != 80 {
		t.Errorf("someone else's Service changed: %+v %+v", got.ObjectMeta, got.Spec)
	}
}

// TestControllerDropsTheGatewayOwner: an object an earlier build wrote,
// owned by the gateway, ends up owned by the anchor alone; with both, the
// garbage collector would keep it after the chart is uninstalled.
func TestControllerDropsTheGatewayOwner(t *testing.T) {
	ctx := context.Background()
	f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
	name := "liqo-relay-" + testGateway
	old := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS,
		Labels:          map[string]string{"app.kubernetes.io/managed-by": ManagedBy},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "networking.liqo.io/v1beta1", Kind: "GatewayServer", Name: testGateway, UID: gwUID}}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: DefaultRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: testGateway, Namespace: testNS}}}
	if _, err := f.client.RbacV1().RoleBindings(testNS).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.ctl.sync(ctx, testNS+"/"+testGateway); err != nil {
		t.Fatal(err)
	}
	rb, _ := f.client.RbacV1().RoleBindings(testNS).Get(ctx, name, metav1.GetOptions{})
	if len(rb.OwnerReferences) != 1 || rb.OwnerReferences[0] != testOwner {
		t.Errorf("owners %+v, want the anchor alone", rb.OwnerReferences)
	}
}

// TestControllerAdoptsTheKeyTheRelayCreated: a key Secret the relay made
// itself (it starts before the sync) gets the controller's labels and the
// anchor, so it goes on uninstall; its key stays. A Secret of that name
// the relay did not make is left alone.
func TestControllerAdoptsTheKeyTheRelayCreated(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		adopted bool
	}{
		{"the relay's", map[string]string{"app.kubernetes.io/managed-by": "liqo-relay", "relay.liqo-relay.io/relay": testLocal}, true},
		{"someone else's", map[string]string{"app": "theirs"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newCtlFixture(t, true, gatewayPodNamed(t, "gw-a", true))
			key := "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: DefaultKeySecret, Namespace: testNS, Labels: tc.labels},
				Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"privateKey": []byte(key)}}
			if _, err := f.client.CoreV1().Secrets(testNS).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			_ = f.ctl.sync(ctx, testNS+"/"+testGateway)
			got, err := f.client.CoreV1().Secrets(testNS).Get(ctx, DefaultKeySecret, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			adopted := len(got.OwnerReferences) == 1 && got.OwnerReferences[0] == testOwner && got.Labels["app.kubernetes.io/managed-by"] == ManagedBy
			if adopted != tc.adopted || string(got.Data["privateKey"]) != key {
				t.Errorf("adopted %v, want %v; key kept %v: %+v", adopted, tc.adopted, string(got.Data["privateKey"]) == key, got.ObjectMeta)
			}
		})
	}
}
