package peering

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"

	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

func obj(gvr schema.GroupVersionResource, kind, ns, name string, labels map[string]string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	u.SetGeneration(1)
	return u
}

func fakeClient(objs ...runtime.Object) *dynfake.FakeDynamicClient {
	return dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		liqo.ForeignClusters: "ForeignClusterList", liqo.Identities: "IdentityList", liqo.Configurations: "ConfigurationList", liqo.IPs: "IPList",
	}, objs...)
}

func configured(cidrKind string, spec, seen []any) map[string]any {
	return map[string]any{
		"spec":   map[string]any{"remote": map[string]any{"cidr": map[string]any{cidrKind: spec}}},
		"status": map[string]any{"remote": map[string]any{"cidr": map[string]any{cidrKind: seen}}, "conditions": []any{map[string]any{"type": "NetworkCIDRsConfigured", "status": "True", "observedGeneration": int64(1)}}},
	}
}

func TestReadConsumerSide(t *testing.T) {
	ctx := context.Background()
	dyn := fakeClient(
		obj(liqo.ForeignClusters, "ForeignCluster", "", "provider-a", map[string]string{liqo.RemoteClusterIDLabel: "provider-a"}, map[string]any{
			"spec": map[string]any{"clusterID": "provider-a"},
			"status": map[string]any{"role": "Provider", "tenantNamespace": map[string]any{"local": "liqo-tenant-provider-a", "remote": "liqo-tenant-consumer"},
				"modules": map[string]any{"networking": map[string]any{"enabled": true, "conditions": []any{map[string]any{"type": "NetworkConnectionStatus", "status": "Established"}}}}},
		}),
		obj(liqo.Identities, "Identity", "liqo-tenant-provider-a", "controlplane-provider-a", nil, map[string]any{
			"status": map[string]any{"kubeconfigSecretRef": map[string]any{"name": "kubeconfig-controlplane-provider-a"}}}),
		obj(liqo.Configurations, "Configuration", "liqo-tenant-provider-a", "provider-a", map[string]string{liqo.RemoteClusterIDLabel: "provider-a"},
			configured("pod", []any{"10.244.0.0/16"}, []any{"10.71.0.0/16"})),
		obj(liqo.IPs, "IP", "default", "web-1", map[string]string{liqo.OffloadedPodLabel: "web-1", liqo.OffloadedPodNSLabel: "default"}, map[string]any{
			"spec": map[string]any{"ip": "10.71.1.5"}, "status": map[string]any{"ip": "10.70.0.11"}}),
		obj(liqo.IPs, "IP", "default", "web-2", map[string]string{liqo.OffloadedPodLabel: "web-2", liqo.OffloadedPodNSLabel: "default"}, map[string]any{
			"spec": map[string]any{"ip": "10.71.1.6"}}),
		obj(liqo.IPs, "IP", "default", "relay-endpoint", nil, map[string]any{"spec": map[string]any{"ip": "10.71.9.9"}}),
	)
	fc, err := GetForeignCluster(ctx, dyn, "provider-a")
	if err != nil {
		t.Fatal(err)
	}
	if fc.LocalTenant != "liqo-tenant-provider-a" || fc.RemoteTenant != "liqo-tenant-consumer" || !fc.NetworkEstablished {
		t.Errorf("ForeignCluster %+v", fc)
	}
	if s, err := KubeconfigSecretName(ctx, dyn, fc); err != nil || s != "kubeconfig-controlplane-provider-a" {
		t.Errorf("kubeconfig Secret %q, %v", s, err)
	}
	rs, err := ConsumerPodRemaps(ctx, dyn, fc)
	if err != nil || len(rs) != 1 || rs[0] != (podmap.Remap{Real: netip.MustParsePrefix("10.244.0.0/16"), Seen: netip.MustParsePrefix("10.71.0.0/16")}) {
		t.Errorf("pod remaps %v, %v", rs, err)
	}
	pods, err := OffloadedPods(ctx, dyn)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || pods[0].Name != "default/web-1" || pods[0].Ext != netip.MustParseAddr("10.70.0.11") || pods[1].Ext.IsValid() {
		t.Errorf("pods %+v: want web-1 with its ext address and web-2 without one; not the unlabelled IP", pods)
	}
}

func TestNotReadyAndErrors(t *testing.T) {
	ctx := context.Background()
	dyn := fakeClient(
		obj(liqo.ForeignClusters, "ForeignCluster", "", "c", map[string]string{liqo.RemoteClusterIDLabel: "c"}, map[string]any{
			"spec": map[string]any{"clusterID": "c"}, "status": map[string]any{"role": "Consumer"}}),
		obj(liqo.ForeignClusters, "ForeignCluster", "", "p", map[string]string{liqo.RemoteClusterIDLabel: "p"}, map[string]any{
			"spec": map[string]any{"clusterID": "p"}, "status": map[string]any{"role": "Provider"}}),
		obj(liqo.Configurations, "Configuration", "t", "x", map[string]string{liqo.RemoteClusterIDLabel: "x"}, map[string]any{
			"spec": map[string]any{"remote": map[string]any{"cidr": map[string]any{"external": []any{"10.70.0.0/16"}}}}}),
	)
	if _, err := GetForeignCluster(ctx, dyn, "nope"); err == nil || !strings.Contains(err.Error(), `no ForeignCluster has spec.clusterID "nope"`) {
		t.Errorf("unknown cluster: %v", err)
	}
	if _, err := GetForeignCluster(ctx, dyn, "c"); err == nil || !strings.Contains(err.Error(), "not a provider") {
		t.Errorf("consumer role: %v", err)
	}
	if _, err := GetForeignCluster(ctx, dyn, "p"); !errors.Is(err, ErrNotReady) {
		t.Errorf("no tenant namespaces yet: %v, want ErrNotReady", err)
	}
	if _, err := ProviderExternalRemap(ctx, dyn, "t", "x"); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "NetworkCIDRsConfigured") {
		t.Errorf("unconfigured Configuration: %v, want ErrNotReady naming the condition", err)
	}
}
