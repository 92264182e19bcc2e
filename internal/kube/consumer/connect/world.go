package connect

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// ErrUnknownCluster marks a cluster ID no ForeignCluster of the consumer has.
var ErrUnknownCluster = peering.ErrUnknownCluster

// ErrConflict marks a write refused because the object changed since it
// was read: the sync is retried.
var ErrConflict = errors.New("conflict")

// RelayIP is an ipam.liqo.io IP the operator created in the consumer for a
// provider relay's consumer-path endpoint.
type RelayIP struct {
	Name     string
	Provider string
	// Spec is spec.ip: the relay's pod IP as the consumer sees it.
	Spec netip.Addr
	// Status is status.ip, in the consumer's external CIDR; invalid until
	// Liqo's IPAM filled it.
	Status   netip.Addr
	Deleting bool
}

// Consumer is what Sync reads and writes in the consumer cluster.
type Consumer interface {
	// ForeignCluster returns the ForeignCluster of id, an error wrapping
	// ErrUnknownCluster when there is none, or one wrapping
	// peering.ErrNotReady while Liqo has not filled it in.
	ForeignCluster(ctx context.Context, id string) (peering.ForeignCluster, error)
	// PodRemaps returns provider fc's pod CIDRs and the consumer's view.
	PodRemaps(ctx context.Context, fc peering.ForeignCluster) ([]podmap.Remap, error)
	// OffloadedPods returns the IPs Liqo made for offloaded pods.
	OffloadedPods(ctx context.Context) ([]podmap.Pod, error)
	// RelayIPs returns the IPs the operator created for provider's relay.
	RelayIPs(ctx context.Context, provider string) ([]RelayIP, error)
	CreateRelayIP(ctx context.Context, ip RelayIP) error
	// DeleteRelayIP deletes an IP; an IP already gone is not an error.
	DeleteRelayIP(ctx context.Context, name string) error
	// UpdateFCC writes f's metadata (finalizers); UpdateFCCStatus its
	// status. Both fail with ErrConflict on a stale f.
	UpdateFCC(ctx context.Context, f *v1alpha1.ForeignClusterConnection) (*v1alpha1.ForeignClusterConnection, error)
	UpdateFCCStatus(ctx context.Context, f *v1alpha1.ForeignClusterConnection) error
}

// Dialer connects to providers' API servers.
type Dialer interface {
	// Provider returns a client for provider fc, authenticated with the
	// Secret override names (in the operator's namespace) or, when nil,
	// with Liqo's control-plane kubeconfig for fc. Clients are cached and
	// rebuilt when their Secret changes.
	Provider(ctx context.Context, fc peering.ForeignCluster, override *v1alpha1.KubeconfigSecretRef) (Provider, error)
}

// Provider is what Sync reads and writes in one provider, in its tenant
// namespace for the consumer.
type Provider interface {
	Relays(ctx context.Context, ns string) ([]v1alpha1.Relay, error)
	// GatewayIP is the pod IP of Liqo's active gateway for consumerID in
	// ns (GatewayServer or GatewayClient status.internalEndpoint.ip): the
	// pod the relay runs in.
	GatewayIP(ctx context.Context, ns, consumerID string) (netip.Addr, error)
	// ExternalRemap is the consumer's external CIDR and this provider's
	// view of it (its Configuration for the consumer).
	ExternalRemap(ctx context.Context, ns, consumerID string) (podmap.Remap, error)
	// RelayPeer returns RelayPeer ns/name, nil when it does not exist.
	RelayPeer(ctx context.Context, ns, name string) (*v1alpha1.RelayPeer, error)
	ApplyRelayPeer(ctx context.Context, ns, name string, labels, annotations map[string]string, spec v1alpha1.RelayPeerSpec) error
	// DeleteRelayPeer deletes one; a RelayPeer already gone is not an error.
	DeleteRelayPeer(ctx context.Context, ns, name string) error
}

// Limiter bounds the write rate to the providers' API servers.
type Limiter interface {
	// Reserve takes one write at now and returns how long the write must
	// wait: 0 to write at once.
	Reserve(now time.Time) time.Duration
}
