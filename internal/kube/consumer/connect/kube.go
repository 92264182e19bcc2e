package connect

import (
	"context"
	"fmt"
	"net/netip"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
	"github.com/liqo-relay/relay/internal/kube/liqo"
)

// kubeConsumer is Consumer over the consumer's API server. The IPs live in the
// operator's namespace.
type kubeConsumer struct {
	ns     string
	dyn    dynamic.Interface
	core   kubernetes.Interface
	relays *client.Client
}

var _ Consumer = (*kubeConsumer)(nil)

func (k *kubeConsumer) ForeignCluster(ctx context.Context, id string) (peering.ForeignCluster, error) {
	return peering.GetForeignCluster(ctx, k.dyn, id)
}

func (k *kubeConsumer) PodRemaps(ctx context.Context, fc peering.ForeignCluster) ([]podmap.Remap, error) {
	return peering.ConsumerPodRemaps(ctx, k.dyn, fc)
}

func (k *kubeConsumer) OffloadedPods(ctx context.Context) ([]podmap.Pod, error) {
	return peering.OffloadedPods(ctx, k.dyn)
}

func (k *kubeConsumer) RelayIPs(ctx context.Context, provider string) ([]RelayIP, error) {
	list, err := k.dyn.Resource(liqo.IPs).Namespace(k.ns).List(ctx, metav1.ListOptions{
		LabelSelector: LabelProvider + "=" + provider + "," + LabelManagedBy + "=" + ManagedBy})
	if err != nil {
		return nil, fmt.Errorf("listing IPs in %s: %w", k.ns, err)
	}
	out := make([]RelayIP, 0, len(list.Items))
	for _, o := range list.Items {
		ip := RelayIP{Name: o.GetName(), Provider: provider, Deleting: o.GetDeletionTimestamp() != nil}
		s, _, _ := unstructured.NestedString(o.Object, "spec", "ip")
		ip.Spec, _ = netip.ParseAddr(s)
		s, _, _ = unstructured.NestedString(o.Object, "status", "ip")
		ip.Status, _ = netip.ParseAddr(s)
		out = append(out, ip)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (k *kubeConsumer) CreateRelayIP(ctx context.Context, ip RelayIP) error {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": liqo.IPs.GroupVersion().String(),
		"kind":       "IP",
		"metadata": map[string]any{
			"name": ip.Name, "namespace": k.ns,
			"labels": map[string]any{LabelProvider: ip.Provider, LabelManagedBy: ManagedBy},
		},
		"spec": map[string]any{"ip": ip.Spec.String()},
	}}
	_, err := k.dyn.Resource(liqo.IPs).Namespace(k.ns).Create(ctx, o, metav1.CreateOptions{FieldManager: client.OperatorFieldManager})
	if err != nil {
		return fmt.Errorf("creating IP %s/%s: %w", k.ns, ip.Name, err)
	}
	return nil
}

func (k *kubeConsumer) DeleteRelayIP(ctx context.Context, name string) error {
	err := k.dyn.Resource(liqo.IPs).Namespace(k.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting IP %s/%s: %w", k.ns, name, err)
	}
	return nil
}

func (k *kubeConsumer) UpdateFCC(ctx context.Context, f *v1alpha1.ForeignClusterConnection) (*v1alpha1.ForeignClusterConnection, error) {
	out, err := k.relays.UpdateFCC(ctx, f)
	if apierrors.IsNotFound(err) && f.DeletionTimestamp != nil {
		return f, nil
	}
	return out, conflict(err)
}

func (k *kubeConsumer) UpdateFCCStatus(ctx context.Context, f *v1alpha1.ForeignClusterConnection) error {
	_, err := k.relays.UpdateFCCStatus(ctx, f)
	return conflict(err)
}

// conflict marks an API conflict (or an AlreadyExists of a create that
// raced another writer) as ErrConflict.
func conflict(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return err
}

// kubeProvider is Provider over one provider's API server.
type kubeProvider struct {
	dyn    dynamic.Interface
	relays *client.Client
}

var _ Provider = (*kubeProvider)(nil)

// Liqo's gateway resources in a provider's tenant namespace.
var (
	gatewayServers = liqo.Configurations.GroupVersion().WithResource("gatewayservers")
	gatewayClients = liqo.Configurations.GroupVersion().WithResource("gatewayclients")
)

func (p *kubeProvider) Relays(ctx context.Context, ns string) ([]v1alpha1.Relay, error) {
	list, err := p.relays.ListRelays(ctx, ns, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Relays in %s: %w", ns, err)
	}
	return list.Items, nil
}

func (p *kubeProvider) GatewayIP(ctx context.Context, ns, consumerID string) (netip.Addr, error) {
	for _, kind := range []string{"GatewayServer", "GatewayClient"} {
		res := gatewayServers
		if kind == "GatewayClient" {
			res = gatewayClients
		}
		o, err := p.dyn.Resource(res).Namespace(ns).Get(ctx, consumerID, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return netip.Addr{}, fmt.Errorf("%s %s/%s: %w", kind, ns, consumerID, err)
		}
		s, _, _ := unstructured.NestedString(o.Object, "status", "internalEndpoint", "ip")
		if s == "" {
			return netip.Addr{}, fmt.Errorf("%s %s/%s: status.internalEndpoint.ip not set yet: %w", kind, ns, consumerID, peering.ErrNotReady)
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("%s %s/%s: status.internalEndpoint.ip: %w", kind, ns, consumerID, err)
		}
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("no GatewayServer or GatewayClient %s in %s: %w", consumerID, ns, peering.ErrNotReady)
}

func (p *kubeProvider) ExternalRemap(ctx context.Context, ns, consumerID string) (podmap.Remap, error) {
	return peering.ProviderExternalRemap(ctx, p.dyn, ns, consumerID)
}

func (p *kubeProvider) RelayPeer(ctx context.Context, ns, name string) (*v1alpha1.RelayPeer, error) {
	rp, err := p.relays.GetRelayPeer(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading RelayPeer %s/%s: %w", ns, name, err)
	}
	return rp, nil
}

func (p *kubeProvider) ApplyRelayPeer(ctx context.Context, ns, name string, labels, annotations map[string]string, spec v1alpha1.RelayPeerSpec) error {
	return p.relays.ApplyRelayPeerAs(ctx, client.OperatorFieldManager, ns, name, labels, annotations, spec)
}

func (p *kubeProvider) DeleteRelayPeer(ctx context.Context, ns, name string) error {
	err := p.relays.DeleteRelayPeer(ctx, ns, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting RelayPeer %s/%s: %w", ns, name, err)
	}
	return nil
}
