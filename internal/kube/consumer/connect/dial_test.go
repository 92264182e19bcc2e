package connect

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// kubeconfigFor is a kubeconfig for an API server that never answers
// (the dialer's watches retry in the background until closed).
func kubeconfigFor(server string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: p, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: p, user: u}}]
current-context: c
`)
}

func TestDialerCachesPerProviderAndReconnectsOnSecretChange(t *testing.T) {
	fc := peering.ForeignCluster{ID: "a", LocalTenant: "liqo-tenant-a", RemoteTenant: "tenant-c"}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: fc.LocalTenant, Name: "kubeconfig-controlplane-a", ResourceVersion: "1"},
		Data:       map[string][]byte{"kubeconfig": kubeconfigFor("https://127.0.0.1:1")},
	}
	override := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-relay", Name: "a-admin", ResourceVersion: "1"},
		Data:       map[string][]byte{"kc": kubeconfigFor("https://127.0.0.1:2")},
	}
	core := fake.NewClientset(secret, override)
	identity := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Identity",
		"metadata": map[string]any{"name": "controlplane-a", "namespace": fc.LocalTenant},
		"status":   map[string]any{"kubeconfigSecretRef": map[string]any{"name": secret.Name}},
	}}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{liqo.Identities: "IdentityList"}, identity)
	ctx, cancel := context.WithCancel(context.Background())
	d := &kubeDialer{base: ctx, ns: "liqo-relay", consumer: "c", core: core, dyn: dyn,
		changed: func(string) {}, log: testLogger(), conns: map[string]*providerConn{}}
	defer func() { cancel(); d.close() }()

	p1, err := d.Provider(ctx, fc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p2, _ := d.Provider(ctx, fc, nil); p2 != p1 {
		t.Error("a second dial with the same Secret built a new client")
	}
	s2 := secret.DeepCopy()
	s2.ResourceVersion = "2"
	s2.Data["kubeconfig"] = kubeconfigFor("https://127.0.0.1:3")
	if _, err := core.CoreV1().Secrets(fc.LocalTenant).Update(ctx, s2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p3, err := d.Provider(ctx, fc, nil)
	if err != nil || p3 == p1 {
		t.Errorf("after the Secret changed: same client %v, err %v", p3 == p1, err)
	}
	p4, err := d.Provider(ctx, fc, &v1alpha1.KubeconfigSecretRef{Name: "a-admin", Key: "kc"})
	if err != nil || p4 == p3 {
		t.Errorf("override Secret: same client %v, err %v", p4 == p3, err)
	}
	_, err = d.Provider(ctx, fc, &v1alpha1.KubeconfigSecretRef{Name: "a-admin"})
	if err == nil || !strings.Contains(err.Error(), "liqo-relay/a-admin has no data.kubeconfig") {
		t.Errorf("missing key: %v", err)
	}
	_, err = d.Provider(ctx, peering.ForeignCluster{ID: "b", LocalTenant: "liqo-tenant-b"}, nil)
	if err == nil || !strings.Contains(err.Error(), "controlplane-b") {
		t.Errorf("no Identity: %v", err)
	}
}

func testLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
