package client

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// FCCResource is the ForeignClusterConnection resource (cluster-scoped).
const FCCResource = "foreignclusterconnections"

// OperatorFieldManager is the server-side apply field manager of the
// consumer-side operator (relay operator): it owns the RelayPeer specs it
// writes into the providers, apart from the relay's own status writes.
const OperatorFieldManager = "liqo-relay-operator"

// ListFCCs lists the ForeignClusterConnections.
func (c *Client) ListFCCs(ctx context.Context, opts metav1.ListOptions) (*v1alpha1.ForeignClusterConnectionList, error) {
	var out v1alpha1.ForeignClusterConnectionList
	err := c.rc.Get().Resource(FCCResource).VersionedParams(&opts, parameterCodec).Do(ctx).Into(&out)
	return &out, err
}

// WatchFCCs watches the ForeignClusterConnections.
func (c *Client) WatchFCCs(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().Resource(FCCResource).VersionedParams(&opts, parameterCodec).Watch(ctx)
}

// UpdateFCC replaces a ForeignClusterConnection's metadata and spec (for
// its finalizers), failing with a conflict when it changed since read.
func (c *Client) UpdateFCC(ctx context.Context, f *v1alpha1.ForeignClusterConnection) (*v1alpha1.ForeignClusterConnection, error) {
	var out v1alpha1.ForeignClusterConnection
	err := c.rc.Put().Resource(FCCResource).Name(f.Name).Body(f).Do(ctx).Into(&out)
	if err != nil {
		return nil, fmt.Errorf("updating ForeignClusterConnection %s: %w", f.Name, err)
	}
	return &out, nil
}

// UpdateFCCStatus replaces a ForeignClusterConnection's status.
func (c *Client) UpdateFCCStatus(ctx context.Context, f *v1alpha1.ForeignClusterConnection) (*v1alpha1.ForeignClusterConnection, error) {
	var out v1alpha1.ForeignClusterConnection
	err := c.rc.Put().Resource(FCCResource).Name(f.Name).SubResource("status").Body(f).Do(ctx).Into(&out)
	if err != nil {
		return nil, fmt.Errorf("updating the status of ForeignClusterConnection %s: %w", f.Name, err)
	}
	return &out, nil
}

// ApplyRelayPeerAs server-side applies labels, annotations and spec as
// RelayPeer ns/name with field manager manager, creating it when needed.
func (c *Client) ApplyRelayPeerAs(ctx context.Context, manager, ns, name string, labels, annotations map[string]string, spec v1alpha1.RelayPeerSpec) error {
	return c.applyAs(ctx, manager, RelayPeersResource, "RelayPeer", ns, name, "", map[string]any{
		"metadata": map[string]any{"labels": labels, "annotations": annotations},
		"spec":     spec,
	})
}
