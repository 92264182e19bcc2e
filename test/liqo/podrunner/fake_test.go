package podrunner

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestNodeRegister(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	client := fake.NewClientset()
	a := &nodeAgent{client: client, cfg: NodeConfig{Name: "n1", IP: "192.168.0.10", PodCIDR: "10.244.1.0/24"}, log: quietLog(), now: func() time.Time { return t0 }}
	ctx := context.Background()
	node, err := a.register(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.renewLease(ctx, node); err != nil {
		t.Fatal(err)
	}
	n, err := client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Spec.PodCIDR != "10.244.1.0/24" || len(n.Spec.PodCIDRs) != 1 || n.Labels[corev1.LabelHostname] != "n1" || n.Labels[corev1.LabelOSStable] != "linux" {
		t.Errorf("spec/labels: %+v %v", n.Spec, n.Labels)
	}
	if n.Status.NodeInfo.KubeletVersion != KubeletVersion || n.Status.Addresses[0].Address != "192.168.0.10" || n.Status.Addresses[0].Type != corev1.NodeInternalIP {
		t.Errorf("status: %+v", n.Status)
	}
	if q := n.Status.Allocatable[corev1.ResourcePods]; q.Value() != maxPods {
		t.Errorf("allocatable pods %v", q)
	}
	var ready *corev1.NodeCondition
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &n.Status.Conditions[i]
		}
	}
	if ready == nil || ready.Status != corev1.ConditionTrue || !ready.LastHeartbeatTime.Time.Equal(t0) {
		t.Errorf("Ready condition %+v", ready)
	}
	l, err := client.CoordinationV1().Leases(leaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != 40 || !l.Spec.RenewTime.Time.Equal(t0) {
		t.Errorf("lease %+v", l.Spec)
	}
	// Renewal and heartbeat later move the times, and the takeover of an
	// existing node keeps its other labels.
	t1 := t0.Add(10 * time.Second)
	a.now = func() time.Time { return t1 }
	n.Labels["keep"] = "me"
	if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.renewLease(ctx, node); err != nil {
		t.Fatal(err)
	}
	l, _ = client.CoordinationV1().Leases(leaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
	n, _ = client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	if !l.Spec.RenewTime.Time.Equal(t1) || n.Labels["keep"] != "me" {
		t.Errorf("renewal: lease %v labels %v", l.Spec.RenewTime, n.Labels)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && (!c.LastHeartbeatTime.Time.Equal(t1) || !c.LastTransitionTime.Time.Equal(t0)) {
			t.Errorf("heartbeat %v transition %v", c.LastHeartbeatTime, c.LastTransitionTime)
		}
	}
	// Another pod CIDR is refused.
	a.cfg.PodCIDR = "10.244.9.0/24"
	if _, err := a.register(ctx); err == nil || !strings.Contains(err.Error(), "has pod CIDR 10.244.1.0/24") {
		t.Errorf("changed CIDR: err = %v", err)
	}
}

// testRunner is a runner over a fake clientset whose pod lister holds
// pods, for the sync paths that touch no namespace or process.
func testRunner(t *testing.T, pods ...*corev1.Pod) (*Runner, *fake.Clientset) {
	t.Helper()
	objs := make([]runtime.Object, 0, len(pods))
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		objs = append(objs, p)
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset(objs...)
	r, err := New(Config{Node: "node1", NodeIP: netip.MustParseAddr("192.168.0.10"), PodCIDR: netip.MustParsePrefix("10.244.1.0/24"),
		StateDir: t.TempDir(), ClusterDNS: "10.96.0.10", Self: "/nonexistent/podrunner", HostMountNS: "/proc/self/ns/mnt"}, client, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	r.podLister = corelisters.NewPodLister(idx)
	r.objects = testObjects()
	t.Cleanup(func() {
		r.queue.ShutDown()
		r.hostMnt.Close()
	})
	return r, client
}

func TestSyncUnsupportedPod(t *testing.T) {
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}
	r, client := testRunner(t, pod)
	ctx := context.Background()
	for range 2 { // the second sync writes nothing and sends no second event
		if _, err := r.sync(ctx, "app/web"); err != nil {
			t.Fatal(err)
		}
	}
	var statusWrites, events int
	for _, a := range client.Actions() {
		switch {
		case a.GetVerb() == "update" && a.GetSubresource() == "status":
			statusWrites++
			got := a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod)
			w := got.Status.ContainerStatuses[0].State.Waiting
			want := `pod app/web cannot run on this node: volume "data" (spec.volumes[0]): persistentVolumeClaim volumes are not supported by the pod runner`
			if got.Status.Phase != corev1.PodPending || w == nil || w.Reason != ReasonUnsupported || w.Message != want {
				t.Errorf("status %+v", got.Status)
			}
		case a.GetVerb() == "create" && a.GetResource().Resource == "events":
			events++
			ev := a.(k8stesting.CreateAction).GetObject().(*corev1.Event)
			if ev.Reason != ReasonUnsupported || ev.Type != corev1.EventTypeWarning || ev.InvolvedObject.UID != pod.UID {
				t.Errorf("event %+v", ev)
			}
		}
	}
	// The lister is not updated by the fake: the second sync sees the old
	// status, writes, conflicts... unless it compares with what it wrote.
	if statusWrites < 1 || events != 1 {
		t.Errorf("%d status writes, %d events; want at least 1 and exactly 1", statusWrites, events)
	}
}

func TestWriteStatusConflict(t *testing.T) {
	pod := testPod()
	pod.ResourceVersion = "1"
	r, client := testRunner(t, pod)
	conflicts := 1
	client.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, pod.Name, nil)
		}
		return false, nil, nil
	})
	run := PodRun{SandboxReady: true, PodIPs: []string{"10.244.1.2"}, HostIPs: []string{"192.168.0.10"},
		Containers: []ContainerRun{{Name: "main", Running: true, PID: 7, Started: true, Ready: true}}}
	if err := r.writeStatus(context.Background(), pod, pod.UID, run); err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb()+"/"+a.GetSubresource())
	}
	if strings.Join(verbs, " ") != "update/status get/ update/status" {
		t.Errorf("actions %v, want update, get after the conflict, update", verbs)
	}
	got, _ := client.CoreV1().Pods("app").Get(context.Background(), "web", metav1.GetOptions{})
	if got.Status.PodIP != "10.244.1.2" || got.Status.Phase != corev1.PodRunning {
		t.Errorf("stored status %+v", got.Status)
	}
	// Unchanged: no write.
	client.ClearActions()
	if err := r.writeStatus(context.Background(), got, got.UID, run); err != nil {
		t.Fatal(err)
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("%d actions for an unchanged status", n)
	}
}

func TestTokenCache(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	client := fake.NewClientset()
	var reqs []*authenticationv1.TokenRequest
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		reqs = append(reqs, tr)
		out := tr.DeepCopy()
		out.Status.Token = "tok" + string(rune('0'+len(reqs)))
		out.Status.ExpirationTimestamp = metav1.NewTime(t0.Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
		return true, out, nil
	})
	c := newTokenCache(client)
	pod := testPod()
	ctx := context.Background()
	tok, err := c.get(ctx, pod, "", 1000, t0)
	if err != nil || tok != "tok1" {
		t.Fatalf("token %q, %v", tok, err)
	}
	if tok, _ := c.get(ctx, pod, "", 1000, t0.Add(799*time.Second)); tok != "tok1" {
		t.Errorf("before 80%% of the lifetime: %q, want the cached tok1", tok)
	}
	if c.nextRefresh() != t0.Add(800*time.Second) {
		t.Errorf("refresh at %v", c.nextRefresh())
	}
	if tok, _ := c.get(ctx, pod, "", 1000, t0.Add(800*time.Second)); tok != "tok2" {
		t.Errorf("after 80%% of the lifetime: %q, want a new token", tok)
	}
	if tok, _ := c.get(ctx, pod, "liqo", 600, t0); tok != "tok3" {
		t.Errorf("another audience: %q", tok)
	}
	r := reqs[0]
	if r.Spec.BoundObjectRef == nil || r.Spec.BoundObjectRef.Kind != "Pod" || r.Spec.BoundObjectRef.UID != pod.UID || len(r.Spec.Audiences) != 0 {
		t.Errorf("request %+v", r.Spec)
	}
	if a := reqs[2].Spec.Audiences; len(a) != 1 || a[0] != "liqo" {
		t.Errorf("audiences %v", a)
	}
}
