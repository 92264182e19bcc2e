// Package client is how every side's process reaches an API server: the
// REST configuration of a kubeconfig or of the pod (RESTConfig), client-go's
// own logs routed into the process's slog (RouteClientLogs), and a small
// typed client for the liqo-relay API (api/v1alpha1) over client-go's REST
// client: list, watch, get, create and server-side apply of Relays and
// RelayPeers and of their status, and the ForeignClusterConnections. It
// keeps generated clientsets out of the project; the controllers depend on
// the narrow interfaces they need, with fakes beside them in their tests.
package client

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// FieldManager is the server-side apply field manager of the relay.
const FieldManager = "liqo-relay"

// Scheme knows the liqo-relay kinds and the meta types.
var Scheme = runtime.NewScheme()

var parameterCodec = runtime.NewParameterCodec(Scheme)

func init() {
	if err := v1alpha1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(Scheme, metav1.SchemeGroupVersion)
}

// Client reaches the liqo-relay API of one cluster.
type Client struct {
	rc rest.Interface
}

// New returns a Client for the API server of cfg.
func New(cfg *rest.Config) (*Client, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1alpha1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(Scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("relay API client: %w", err)
	}
	return &Client{rc: rc}, nil
}

// Resources of the API.
const (
	RelaysResource     = "relays"
	RelayPeersResource = "relaypeers"
)

// ListRelayPeers lists the RelayPeers of namespace ns matching opts.
func (c *Client) ListRelayPeers(ctx context.Context, ns string, opts metav1.ListOptions) (*v1alpha1.RelayPeerList, error) {
	var out v1alpha1.RelayPeerList
	err := c.rc.Get().Namespace(ns).Resource(RelayPeersResource).
		VersionedParams(&opts, parameterCodec).Do(ctx).Into(&out)
	return &out, err
}

// WatchRelayPeers watches the RelayPeers of namespace ns matching opts.
func (c *Client) WatchRelayPeers(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().Namespace(ns).Resource(RelayPeersResource).
		VersionedParams(&opts, parameterCodec).Watch(ctx)
}

// GetRelayPeer reads one RelayPeer.
func (c *Client) GetRelayPeer(ctx context.Context, ns, name string) (*v1alpha1.RelayPeer, error) {
	var out v1alpha1.RelayPeer
	err := c.rc.Get().Namespace(ns).Resource(RelayPeersResource).Name(name).Do(ctx).Into(&out)
	return &out, err
}

// ListRelays lists the Relays of namespace ns matching opts.
func (c *Client) ListRelays(ctx context.Context, ns string, opts metav1.ListOptions) (*v1alpha1.RelayList, error) {
	var out v1alpha1.RelayList
	err := c.rc.Get().Namespace(ns).Resource(RelaysResource).
		VersionedParams(&opts, parameterCodec).Do(ctx).Into(&out)
	return &out, err
}

// WatchRelays watches the Relays of namespace ns matching opts.
func (c *Client) WatchRelays(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().Namespace(ns).Resource(RelaysResource).
		VersionedParams(&opts, parameterCodec).Watch(ctx)
}

// GetRelay reads one Relay.
func (c *Client) GetRelay(ctx context.Context, ns, name string) (*v1alpha1.Relay, error) {
	var out v1alpha1.Relay
	err := c.rc.Get().Namespace(ns).Resource(RelaysResource).Name(name).Do(ctx).Into(&out)
	return &out, err
}

// ApplyRelayPeerStatus server-side applies st as the status of RelayPeer
// ns/name, owning exactly the fields it sets.
func (c *Client) ApplyRelayPeerStatus(ctx context.Context, ns, name string, st v1alpha1.RelayPeerStatus) error {
	return c.apply(ctx, RelayPeersResource, "RelayPeer", ns, name, "status", map[string]any{"status": st})
}

// ApplyRelayPeer server-side applies spec and labels as RelayPeer ns/name,
// creating it when it does not exist.
func (c *Client) ApplyRelayPeer(ctx context.Context, ns, name string, labels map[string]string, spec v1alpha1.RelayPeerSpec) error {
	return c.apply(ctx, RelayPeersResource, "RelayPeer", ns, name, "", map[string]any{
		"metadata": map[string]any{"labels": labels},
		"spec":     spec,
	})
}

// ApplyRelay server-side applies the metadata fields of Relay ns/name
// (creating it with an empty spec when it does not exist).
func (c *Client) ApplyRelay(ctx context.Context, ns, name string, labels map[string]string) error {
	return c.apply(ctx, RelaysResource, "Relay", ns, name, "", map[string]any{
		"metadata": map[string]any{"labels": labels},
	})
}

// ApplyRelayStatus server-side applies st as the status of Relay ns/name.
func (c *Client) ApplyRelayStatus(ctx context.Context, ns, name string, st v1alpha1.RelayStatus) error {
	return c.apply(ctx, RelaysResource, "Relay", ns, name, "status", map[string]any{"status": st})
}

// DeleteRelayPeer deletes RelayPeer ns/name.
func (c *Client) DeleteRelayPeer(ctx context.Context, ns, name string) error {
	return c.rc.Delete().Namespace(ns).Resource(RelayPeersResource).Name(name).Do(ctx).Error()
}

func (c *Client) apply(ctx context.Context, resource, kind, ns, name, sub string, body map[string]any) error {
	return c.applyAs(ctx, FieldManager, resource, kind, ns, name, sub, body)
}

// applyAs server-side applies body as field manager manager.
func (c *Client) applyAs(ctx context.Context, manager, resource, kind, ns, name, sub string, body map[string]any) error {
	md, _ := body["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["name"], md["namespace"] = name, ns
	body["metadata"] = md
	body["apiVersion"] = v1alpha1.SchemeGroupVersion.String()
	body["kind"] = kind
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encoding %s %s/%s: %w", kind, ns, name, err)
	}
	force := true
	req := c.rc.Patch(types.ApplyPatchType).Namespace(ns).Resource(resource).Name(name).
		VersionedParams(&metav1.PatchOptions{FieldManager: manager, Force: &force}, parameterCodec).
		Body(data)
	if sub != "" {
		req = req.SubResource(sub)
	}
	if err := req.Do(ctx).Error(); err != nil {
		return fmt.Errorf("applying %s %s/%s %s: %w", kind, ns, name, sub, err)
	}
	return nil
}
