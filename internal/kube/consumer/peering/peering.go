// Package peering reads, for the consumer-side operator, what Liqo knows
// of a peering (docs/operator.md, "What the operator reads from Liqo")
// through a dynamic client, without importing Liqo's Go types:
// ForeignClusters, control-plane Identities and their kubeconfig Secrets,
// Configurations (the consumer's, and through a provider's client that
// provider's) and IP objects. Each reader turns an object into the plain
// values the operator computes with (consumer/podmap) and says precisely
// what is missing when Liqo has not got that far yet.
package peering

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// ErrNotReady marks a Liqo object that exists but is not ready yet: the
// caller waits and retries rather than failing.
var ErrNotReady = errors.New("not ready")

// ErrUnknownCluster marks a cluster ID that no ForeignCluster has.
var ErrUnknownCluster = errors.New("unknown cluster")

// ForeignCluster is what the operator needs of one peer.
type ForeignCluster struct {
	ID string
	// LocalTenant is the consumer's tenant namespace for the provider.
	LocalTenant string
	// RemoteTenant is the provider's tenant namespace for the consumer:
	// where Liqo's gateway for the consumer, and the relay, run.
	RemoteTenant string
	Role         string
	// NetworkEstablished: Liqo's network to the provider is up.
	NetworkEstablished bool
}

// GetForeignCluster finds the ForeignCluster of clusterID.
func GetForeignCluster(ctx context.Context, dyn dynamic.Interface, clusterID string) (ForeignCluster, error) {
	list, err := dyn.Resource(liqo.ForeignClusters).List(ctx, metav1.ListOptions{LabelSelector: liqo.RemoteClusterIDLabel + "=" + clusterID})
	if err != nil {
		return ForeignCluster{}, fmt.Errorf("listing ForeignClusters: %w", err)
	}
	var found []unstructured.Unstructured
	for _, o := range list.Items {
		if id, _, _ := unstructured.NestedString(o.Object, "spec", "clusterID"); id == clusterID {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 0:
		return ForeignCluster{}, fmt.Errorf("no ForeignCluster has spec.clusterID %q (label %s): %w", clusterID, liqo.RemoteClusterIDLabel, ErrUnknownCluster)
	case 1:
	default:
		return ForeignCluster{}, fmt.Errorf("%d ForeignClusters have spec.clusterID %q", len(found), clusterID)
	}
	o := found[0].Object
	fc := ForeignCluster{ID: clusterID}
	fc.LocalTenant, _, _ = unstructured.NestedString(o, "status", "tenantNamespace", "local")
	fc.RemoteTenant, _, _ = unstructured.NestedString(o, "status", "tenantNamespace", "remote")
	fc.Role, _, _ = unstructured.NestedString(o, "status", "role")
	conds, _, _ := unstructured.NestedSlice(o, "status", "modules", "networking", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "NetworkConnectionStatus" && m["status"] == "Established" {
			fc.NetworkEstablished = true
		}
	}
	switch {
	case fc.Role != "Provider" && fc.Role != "ConsumerAndProvider":
		return fc, fmt.Errorf("liqo ForeignCluster %s has role %q: it is not a provider of this cluster", clusterID, fc.Role)
	case fc.LocalTenant == "" || fc.RemoteTenant == "":
		return fc, fmt.Errorf("liqo ForeignCluster %s: status.tenantNamespace not set yet: %w", clusterID, ErrNotReady)
	}
	return fc, nil
}

// KubeconfigSecretName returns the name of the Secret holding the
// kubeconfig Liqo uses to reach provider fc's API server: the control-plane
// Identity's status.kubeconfigSecretRef, in the consumer's tenant namespace.
func KubeconfigSecretName(ctx context.Context, dyn dynamic.Interface, fc ForeignCluster) (string, error) {
	name := "controlplane-" + fc.ID
	id, err := dyn.Resource(liqo.Identities).Namespace(fc.LocalTenant).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("liqo Identity %s/%s: %w", fc.LocalTenant, name, err)
	}
	s, _, _ := unstructured.NestedString(id.Object, "status", "kubeconfigSecretRef", "name")
	if s == "" {
		return "", fmt.Errorf("liqo Identity %s/%s: status.kubeconfigSecretRef not set yet: %w", fc.LocalTenant, name, ErrNotReady)
	}
	return s, nil
}

// configuration finds the Configuration of ns for the remote cluster id
// and checks that its status is valid for its spec.
func configuration(ctx context.Context, dyn dynamic.Interface, ns, id string) (map[string]any, error) {
	list, err := dyn.Resource(liqo.Configurations).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: liqo.RemoteClusterIDLabel + "=" + id})
	if err != nil {
		return nil, fmt.Errorf("listing Configurations in %s: %w", ns, err)
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("%d Configurations for cluster %s in %s, want 1: %w", len(list.Items), id, ns, ErrNotReady)
	}
	o := list.Items[0]
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		gen, _ := m["observedGeneration"].(int64)
		if m["type"] == "NetworkCIDRsConfigured" && m["status"] == "True" && gen == o.GetGeneration() {
			return o.Object, nil
		}
	}
	return nil, fmt.Errorf("liqo Configuration %s/%s: NetworkCIDRsConfigured is not True for generation %d: %w", ns, o.GetName(), o.GetGeneration(), ErrNotReady)
}

// remaps pairs spec.remote.cidr.<kind>[i] with status.remote.cidr.<kind>[i].
func remaps(o map[string]any, kind string) ([]podmap.Remap, error) {
	spec, _, _ := unstructured.NestedStringSlice(o, "spec", "remote", "cidr", kind)
	seen, _, _ := unstructured.NestedStringSlice(o, "status", "remote", "cidr", kind)
	if len(spec) == 0 || len(spec) != len(seen) {
		return nil, fmt.Errorf("liqo Configuration: spec.remote.cidr.%s %v and status.remote.cidr.%s %v do not pair up: %w", kind, spec, kind, seen, ErrNotReady)
	}
	out := make([]podmap.Remap, len(spec))
	for i := range spec {
		r, err1 := netip.ParsePrefix(spec[i])
		s, err2 := netip.ParsePrefix(seen[i])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("liqo Configuration: remote.cidr.%s[%d]: %w", kind, i, err)
		}
		out[i] = podmap.Remap{Real: r, Seen: s}
	}
	return out, nil
}

// ConsumerPodRemaps reads, in the consumer, the Configuration for provider
// fc: the provider's real pod CIDRs and the consumer's view of them.
func ConsumerPodRemaps(ctx context.Context, dyn dynamic.Interface, fc ForeignCluster) ([]podmap.Remap, error) {
	o, err := configuration(ctx, dyn, fc.LocalTenant, fc.ID)
	if err != nil {
		return nil, err
	}
	return remaps(o, "pod")
}

// ProviderExternalRemap reads, in a provider (dyn is the provider's
// client), its Configuration for the consumer: the consumer's external CIDR
// and the provider's view of it.
func ProviderExternalRemap(ctx context.Context, dyn dynamic.Interface, remoteTenant, consumerID string) (podmap.Remap, error) {
	o, err := configuration(ctx, dyn, remoteTenant, consumerID)
	if err != nil {
		return podmap.Remap{}, err
	}
	rs, err := remaps(o, "external")
	if err != nil {
		return podmap.Remap{}, err
	}
	return rs[0], nil
}

// OffloadedPods lists the IP objects Liqo created for offloaded pods, in
// every namespace of the consumer. An IP being deleted is left out.
func OffloadedPods(ctx context.Context, dyn dynamic.Interface) ([]podmap.Pod, error) {
	list, err := dyn.Resource(liqo.IPs).List(ctx, metav1.ListOptions{LabelSelector: liqo.OffloadedPodLabel})
	if err != nil {
		return nil, fmt.Errorf("listing IPs: %w", err)
	}
	out := make([]podmap.Pod, 0, len(list.Items))
	for _, o := range list.Items {
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		spec, _, _ := unstructured.NestedString(o.Object, "spec", "ip")
		c, err := netip.ParseAddr(spec)
		if err != nil {
			continue // not a pod address Liqo would map either
		}
		p := podmap.Pod{Name: o.GetNamespace() + "/" + o.GetName(), Consumer: c}
		if st, _, _ := unstructured.NestedString(o.Object, "status", "ip"); st != "" {
			if a, err := netip.ParseAddr(strings.TrimSpace(st)); err == nil {
				p.Ext = a
			}
		}
		out = append(out, p)
	}
	return out, nil
}
