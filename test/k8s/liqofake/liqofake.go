// Package liqofake creates, on real API servers started by k8stest, the
// Liqo v1.2.0 objects that a real peering has (ForeignClusters, Identities
// with their kubeconfig Secrets, Configurations with their status,
// GatewayServers, the IPs of offloaded pods), and runs a stand-in for
// Liqo's IPAM that fills the IPs' status. The operator's tests and the
// end-to-end test of the FCC share it. The objects' shapes follow Liqo's
// CRDs in test/fixtures/liqo-v1.2.0 (docs/operator.md lists the fields the
// operator reads).
package liqofake

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/liqo-relay/relay/internal/kube/liqo"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// GatewayServers is Liqo's GatewayServer resource (the operator reads its
// status.internalEndpoint.ip in the providers).
var GatewayServers = schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "gatewayservers"}

// IPAMFinalizer is the finalizer Liqo's IPAM puts on every IP.
const IPAMFinalizer = "ip.ipam.liqo.io/finalizer"

// InstallCRDs installs ours and Liqo's v1.2.0 CRDs and waits until the
// ones the operator uses are established.
func InstallCRDs(t testing.TB, c *k8stest.Cluster) {
	t.Helper()
	c.InstallCRDs(t)
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(k8stest.Root(), "test", "fixtures", "liqo-v1.2.0", "crds"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/foreignclusters.core.liqo.io", "crd/identities.authentication.liqo.io", "crd/configurations.networking.liqo.io",
		"crd/ips.ipam.liqo.io", "crd/gatewayservers.networking.liqo.io", "crd/foreignclusterconnections.relay.liqo-relay.io")
}

// Apply creates obj and then, when status is not nil, sets its status.
func Apply(t testing.TB, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj map[string]any, status map[string]any) {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: obj}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if ns := u.GetNamespace(); ns != "" {
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	created, err := ri.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", gvr.Resource, u.GetName(), err)
	}
	if status != nil {
		created.Object["status"] = status
		if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("status of %s %s: %v", gvr.Resource, u.GetName(), err)
		}
	}
}

// configuredCondition is the condition Liqo sets on a Configuration whose
// remapped CIDRs are in place.
func configuredCondition() []any {
	return []any{map[string]any{"type": "NetworkCIDRsConfigured", "status": "True", "reason": "Configured",
		"message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1)}}
}

// CIDRs are one side of a Configuration: a pod and an external CIDR.
type CIDRs struct{ Pod, External string }

func (c CIDRs) obj() map[string]any {
	return map[string]any{"cidr": map[string]any{"pod": []any{c.Pod}, "external": []any{c.External}}}
}

// Configuration creates, in ns, the Configuration name for the remote
// cluster remoteID: spec.local and spec.remote, and the remote CIDRs as
// this cluster remaps them (status.remote) with NetworkCIDRsConfigured.
func Configuration(t testing.TB, dyn dynamic.Interface, ns, name, remoteID string, local, remote, remoteSeen CIDRs) {
	t.Helper()
	Apply(t, dyn, liqo.Configurations, map[string]any{
		"apiVersion": "networking.liqo.io/v1beta1", "kind": "Configuration",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{liqo.RemoteClusterIDLabel: remoteID}},
		"spec":     map[string]any{"local": local.obj(), "remote": remote.obj()},
	}, map[string]any{"remote": remoteSeen.obj(), "conditions": configuredCondition()})
}

// GatewayServer creates, in a provider's tenant namespace ns, the
// GatewayServer named after the consumer, with the gateway pod's IP in
// status.internalEndpoint.ip.
func GatewayServer(t testing.TB, dyn dynamic.Interface, ns, consumerID, gatewayIP string) {
	t.Helper()
	Apply(t, dyn, GatewayServers, map[string]any{
		"apiVersion": "networking.liqo.io/v1beta1", "kind": "GatewayServer",
		"metadata": map[string]any{"name": consumerID, "namespace": ns},
		"spec":     map[string]any{"endpoint": map[string]any{"port": 51840, "serviceType": "NodePort"}, "mtu": 1340},
	}, map[string]any{"internalEndpoint": map[string]any{"ip": gatewayIP, "node": "node-1"}})
}

// Peering creates in the consumer c what Liqo keeps there for provider
// id: the tenant namespace liqo-tenant-<id>, the ForeignCluster (role
// Provider, networking Established, its tenant namespace in the provider
// remoteTenant), the control-plane Identity and its kubeconfig Secret
// (the file kubeconfig, which reaches the provider's API server). It
// returns the tenant namespace.
func Peering(t testing.TB, c *k8stest.Cluster, dyn dynamic.Interface, id, remoteTenant, kubeconfig string) string {
	t.Helper()
	tenant := "liqo-tenant-" + id
	c.Kubectl(t, "create", "namespace", tenant)
	Apply(t, dyn, liqo.ForeignClusters, map[string]any{
		"apiVersion": "core.liqo.io/v1beta1", "kind": "ForeignCluster",
		"metadata": map[string]any{"name": id, "labels": map[string]any{liqo.RemoteClusterIDLabel: id}},
		"spec":     map[string]any{"clusterID": id},
	}, map[string]any{
		"role":            "Provider",
		"tenantNamespace": map[string]any{"local": tenant, "remote": remoteTenant},
		"modules": map[string]any{
			"networking":     map[string]any{"enabled": true, "conditions": []any{map[string]any{"type": "NetworkConnectionStatus", "status": "Established"}}},
			"authentication": map[string]any{"enabled": true},
			"offloading":     map[string]any{"enabled": true},
		},
	})
	secret := "kubeconfig-controlplane-" + id
	c.Kubectl(t, "-n", tenant, "create", "secret", "generic", secret, "--from-file="+liqo.KubeconfigKey+"="+kubeconfig)
	Apply(t, dyn, liqo.Identities, map[string]any{
		"apiVersion": "authentication.liqo.io/v1beta1", "kind": "Identity",
		"metadata": map[string]any{"name": "controlplane-" + id, "namespace": tenant, "labels": map[string]any{liqo.RemoteClusterIDLabel: id}},
		"spec": map[string]any{"clusterID": id, "type": "ControlPlane", "namespace": remoteTenant,
			"authParams": map[string]any{"apiServer": "https://example", "ca": "Y2E=", "signedCRT": "Y3J0"}},
	}, map[string]any{"kubeconfigSecretRef": map[string]any{"name": secret}})
	return tenant
}

// OffloadedPod creates the IP Liqo makes for an offloaded pod: spec.ip is
// the pod's IP as the consumer sees it; the IPAM fills status.ip.
func OffloadedPod(t testing.TB, dyn dynamic.Interface, ns, name, consumerIP string) {
	t.Helper()
	Apply(t, dyn, liqo.IPs, map[string]any{
		"apiVersion": "ipam.liqo.io/v1alpha1", "kind": "IP",
		"metadata": map[string]any{"name": name, "namespace": ns,
			"labels": map[string]any{liqo.OffloadedPodLabel: name, liqo.OffloadedPodNSLabel: ns}},
		"spec": map[string]any{"ip": consumerIP},
	}, nil)
}

// Assign gives an IP its status.ip, as Liqo's IPAM would; false leaves
// the IP without one for now.
type Assign func(ip *unstructured.Unstructured) (string, bool)

// IPAM does what Liqo's IPAM does to IPs until ctx is done: every IP gets
// the finalizer and a status.ip from assign (once), a deleted IP loses
// its finalizer. It polls; errors are retried on the next round.
func IPAM(ctx context.Context, dyn dynamic.Interface, cidr string, assign Assign) {
	ri := dyn.Resource(liqo.IPs)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, o := range list.Items {
			nri := ri.Namespace(o.GetNamespace())
			switch {
			case o.GetDeletionTimestamp() != nil:
				o.SetFinalizers(nil)
				_, _ = nri.Update(ctx, &o, metav1.UpdateOptions{})
			case !slices.Contains(o.GetFinalizers(), IPAMFinalizer):
				o.SetFinalizers(append(o.GetFinalizers(), IPAMFinalizer))
				_, _ = nri.Update(ctx, &o, metav1.UpdateOptions{})
			default:
				if s, _, _ := unstructured.NestedString(o.Object, "status", "ip"); s != "" {
					continue
				}
				ip, ok := assign(&o)
				if !ok {
					continue
				}
				o.Object["status"] = map[string]any{"ip": ip, "cidr": cidr}
				_, _ = nri.UpdateStatus(ctx, &o, metav1.UpdateOptions{})
			}
		}
	}
}

// ProviderAccess binds, in a provider's namespace ns, the Role of
// manifests/rbac/operator-provider-role.yaml to a ServiceAccount
// consumer-operator and returns a kubeconfig with its token: what the
// consumer's operator acts with in that provider.
func ProviderAccess(t testing.TB, c *k8stest.Cluster, ns string) string {
	t.Helper()
	c.Kubectl(t, "-n", ns, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "operator-provider-role.yaml"))
	kc := c.ServiceAccountKubeconfig(t, ns, "consumer-operator")
	c.Kubectl(t, "-n", ns, "create", "rolebinding", "liqo-relay-operator", "--role=liqo-relay-operator",
		"--serviceaccount="+ns+":consumer-operator")
	return kc
}

// OperatorAccess binds, in the consumer, manifests/rbac/operator-role.yaml
// (its ClusterRole, and its Role in the operator's namespace ns) to a
// ServiceAccount operator and returns a kubeconfig with its token.
func OperatorAccess(t testing.TB, c *k8stest.Cluster, ns string) string {
	t.Helper()
	c.Kubectl(t, "-n", ns, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "operator-role.yaml"))
	kc := c.ServiceAccountKubeconfig(t, ns, "operator")
	c.Kubectl(t, "create", "clusterrolebinding", "liqo-relay-operator", "--clusterrole=liqo-relay-operator", "--serviceaccount="+ns+":operator")
	c.Kubectl(t, "-n", ns, "create", "rolebinding", "liqo-relay-operator", "--role=liqo-relay-operator", "--serviceaccount="+ns+":operator")
	return kc
}
