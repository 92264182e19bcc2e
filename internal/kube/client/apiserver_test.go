package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

const (
	ns   = "tenant"
	keyB = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="
)

// TestOnAPIServer runs the client against a real kube-apiserver with the
// project's CRDs: what a fake REST server cannot check, the CRDs' schema,
// the status subresource and server-side apply's field ownership.
func TestOnAPIServer(t *testing.T) {
	c := k8stest.Start(t, "client", "")
	c.InstallCRDs(t)
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/foreignclusterconnections.relay.liqo-relay.io")
	c.Kubectl(t, "create", "namespace", ns)
	rc, err := client.New(c.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Relay", func(t *testing.T) { relayOnAPIServer(t, rc) })
	t.Run("RelayPeer", func(t *testing.T) { relayPeerOnAPIServer(t, rc) })
	t.Run("ForeignClusterConnection", func(t *testing.T) { fccOnAPIServer(t, c, rc) })
}

// relayOnAPIServer: apply creates the Relay, status apply fills its
// status, and applying the metadata again leaves the status alone.
func relayOnAPIServer(t *testing.T, rc *client.Client) {
	ctx := context.Background()
	labels := map[string]string{v1alpha1.RelayLabel: "relay-a"}
	if err := rc.ApplyRelay(ctx, ns, "relay-a", labels); err != nil {
		t.Fatal(err)
	}
	if err := rc.ApplyRelayStatus(ctx, ns, "relay-a", v1alpha1.RelayStatus{PublicKey: keyB, ListenPort: 51900, Ready: true}); err != nil {
		t.Fatal(err)
	}
	if err := rc.ApplyRelay(ctx, ns, "relay-a", labels); err != nil {
		t.Fatal(err)
	}
	r, err := rc.GetRelay(ctx, ns, "relay-a")
	if err != nil {
		t.Fatal(err)
	}
	if r.Labels[v1alpha1.RelayLabel] != "relay-a" || r.Status.PublicKey != keyB || r.Status.ListenPort != 51900 || !r.Status.Ready {
		t.Errorf("Relay %v, status %+v", r.Labels, r.Status)
	}
	list, err := rc.ListRelays(ctx, ns, metav1.ListOptions{LabelSelector: v1alpha1.RelayLabel + "=relay-a"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("listing by label: %v, %v", list, err)
	}
	if _, err := rc.GetRelay(ctx, ns, "relay-z"); !apierrors.IsNotFound(err) {
		t.Errorf("a missing Relay: err %v, want NotFound", err)
	}
}

// relayPeerOnAPIServer: the operator applies a RelayPeer's spec, a watch
// from the list sees the relay's status apply, each field manager owns its
// own fields, a spec the schema refuses is an error that says which, and
// delete removes it.
func relayPeerOnAPIServer(t *testing.T, rc *client.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	labels := map[string]string{v1alpha1.RelayLabel: "relay-a"}
	spec := v1alpha1.RelayPeerSpec{PublicKey: keyB, Prefixes: []v1alpha1.Prefix{"10.72.0.0/16"}}
	if err := rc.ApplyRelayPeerAs(ctx, client.OperatorFieldManager, ns, "b", labels, map[string]string{"note": "x"}, spec); err != nil {
		t.Fatal(err)
	}
	list, err := rc.ListRelayPeers(ctx, ns, metav1.ListOptions{LabelSelector: v1alpha1.RelayLabel + "=relay-a"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.PublicKey != keyB || list.Items[0].Annotations["note"] != "x" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	w, err := rc.WatchRelayPeers(ctx, ns, metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=b"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := rc.ApplyRelayPeerStatus(ctx, ns, "b", v1alpha1.RelayPeerStatus{ActivePath: "direct", Reachable: true}); err != nil {
		t.Fatal(err)
	}
	seen := false
	for ev := range w.ResultChan() {
		if p, ok := ev.Object.(*v1alpha1.RelayPeer); ev.Type == watch.Modified && ok && p.Status.ActivePath == "direct" {
			seen = true
			break
		}
	}
	if !seen {
		t.Fatal("the watch ended without the status write")
	}
	p, err := rc.GetRelayPeer(ctx, ns, "b")
	if err != nil {
		t.Fatal(err)
	}
	managers := map[string]string{}
	for _, m := range p.ManagedFields {
		managers[m.Manager+"/"+m.Subresource] = string(m.Operation)
	}
	if managers[client.OperatorFieldManager+"/"] != "Apply" || managers[client.FieldManager+"/status"] != "Apply" {
		t.Errorf("field managers %v: want the operator owning the object and the relay its status", managers)
	}
	err = rc.ApplyRelayPeer(ctx, ns, "bad", labels, v1alpha1.RelayPeerSpec{PublicKey: "not-a-key"})
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), "applying RelayPeer tenant/bad") || !strings.Contains(err.Error(), "spec.publicKey") {
		t.Errorf("an invalid spec: err %v, want Invalid naming the RelayPeer and spec.publicKey", err)
	}
	if err := rc.DeleteRelayPeer(ctx, ns, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.GetRelayPeer(ctx, ns, "b"); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: err %v, want NotFound", err)
	}
}

// fccOnAPIServer: update writes the FCC's metadata, an update from a stale
// read conflicts, and the status goes through its subresource.
func fccOnAPIServer(t *testing.T, c *k8stest.Cluster, rc *client.Client) {
	ctx := context.Background()
	c.KubectlIn(t, `{"apiVersion":"relay.liqo-relay.io/v1alpha1","kind":"ForeignClusterConnection","metadata":{"name":"a-b"},"spec":{"clusterA":"a","clusterB":"b"}}`, "create", "-f", "-")
	list, err := rc.ListFCCs(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %+v, %v", list, err)
	}
	stale := list.Items[0].DeepCopy()
	f := list.Items[0].DeepCopy()
	f.Finalizers = []string{"relay.liqo-relay.io/test"}
	f, err = rc.UpdateFCC(ctx, f)
	if err != nil || len(f.Finalizers) != 1 {
		t.Fatalf("update: %+v, %v", f, err)
	}
	stale.Labels = map[string]string{"x": "y"}
	if _, err := rc.UpdateFCC(ctx, stale); !apierrors.IsConflict(err) || !strings.HasPrefix(err.Error(), "updating ForeignClusterConnection a-b: ") {
		t.Errorf("a stale update: err %v, want a Conflict naming the FCC", err)
	}
	f.Status.Phase = v1alpha1.PhasePending
	if f, err = rc.UpdateFCCStatus(ctx, f); err != nil || f.Status.Phase != v1alpha1.PhasePending {
		t.Errorf("status update: %+v, %v", f, err)
	}
	f.Finalizers = nil
	if _, err := rc.UpdateFCC(ctx, f); err != nil {
		t.Errorf("removing the finalizer: %v", err)
	}
}
