package client

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// asJSON is v as the server decodes it from a request body.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestApply checks each server-side apply: a PATCH of type apply, forced,
// as the right field manager, of exactly the fields the call owns; the
// Relay or RelayPeer is created when missing (the server answers 201).
func TestApply(t *testing.T) {
	ctx := context.Background()
	spec := v1alpha1.RelayPeerSpec{PublicKey: "K=", Prefixes: []v1alpha1.Prefix{"10.72.0.0/16"}}
	labels := map[string]string{v1alpha1.RelayLabel: "relay-a"}
	for _, tc := range []struct {
		name, path, manager, kind string
		object                    string // metadata.name
		apply                     func(c *Client) error
		want                      map[string]any // the body but apiVersion, kind, metadata.name and namespace
	}{
		{"ApplyRelayPeer creates", apiPath + "/namespaces/ns/relaypeers/b", FieldManager, "RelayPeer", "b",
			func(c *Client) error { return c.ApplyRelayPeer(ctx, "ns", "b", labels, spec) },
			map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}},
		{"ApplyRelayPeerAs", apiPath + "/namespaces/ns/relaypeers/b", OperatorFieldManager, "RelayPeer", "b",
			func(c *Client) error {
				return c.ApplyRelayPeerAs(ctx, OperatorFieldManager, "ns", "b", labels, map[string]string{"note": "x"}, spec)
			},
			map[string]any{"metadata": map[string]any{"labels": labels, "annotations": map[string]string{"note": "x"}}, "spec": spec}},
		{"ApplyRelay", apiPath + "/namespaces/ns/relays/relay-a", FieldManager, "Relay", "relay-a",
			func(c *Client) error { return c.ApplyRelay(ctx, "ns", "relay-a", labels) },
			map[string]any{"metadata": map[string]any{"labels": labels}}},
		{"ApplyRelayStatus", apiPath + "/namespaces/ns/relays/relay-a/status", FieldManager, "Relay", "relay-a",
			func(c *Client) error {
				return c.ApplyRelayStatus(ctx, "ns", "relay-a", v1alpha1.RelayStatus{PublicKey: "K=", Ready: true})
			},
			map[string]any{"status": v1alpha1.RelayStatus{PublicKey: "K=", Ready: true}}},
		{"ApplyRelayPeerStatus", apiPath + "/namespaces/ns/relaypeers/b/status", FieldManager, "RelayPeer", "b",
			func(c *Client) error {
				return c.ApplyRelayPeerStatus(ctx, "ns", "b", v1alpha1.RelayPeerStatus{ActivePath: "direct", Reachable: true})
			},
			map[string]any{"status": v1alpha1.RelayPeerStatus{ActivePath: "direct", Reachable: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake(t, "", reply(http.StatusCreated, map[string]any{"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": tc.kind}))
			if err := tc.apply(c); err != nil {
				t.Fatal(err)
			}
			r := f.last(t)
			if r.method != http.MethodPatch || r.path != tc.path || r.contentType != string(types.ApplyPatchType) {
				t.Errorf("%s %s (%s), want PATCH %s (%s)", r.method, r.path, r.contentType, tc.path, types.ApplyPatchType)
			}
			if r.query.Get("fieldManager") != tc.manager || r.query.Get("force") != "true" {
				t.Errorf("query %s, want fieldManager=%s and force", r.query.Encode(), tc.manager)
			}
			want := asJSON(t, tc.want).(map[string]any)
			want["apiVersion"], want["kind"] = v1alpha1.SchemeGroupVersion.String(), tc.kind
			md, _ := want["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				want["metadata"] = md
			}
			md["name"], md["namespace"] = tc.object, "ns"
			if !reflect.DeepEqual(r.body, want) {
				t.Errorf("body\n%v\nwant\n%v", r.body, want)
			}
		})
	}
}

func TestUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	fcc := &v1alpha1.ForeignClusterConnection{TypeMeta: typeMeta("ForeignClusterConnection"), ObjectMeta: meta("", "a-b"),
		Spec: v1alpha1.ForeignClusterConnectionSpec{ClusterA: "a", ClusterB: "b"}}
	for _, tc := range []struct {
		name, method, path string
		call               func(c *Client) error
	}{
		{"UpdateFCC", http.MethodPut, apiPath + "/foreignclusterconnections/a-b", func(c *Client) error {
			got, err := c.UpdateFCC(ctx, fcc)
			if err == nil && got.Spec.ClusterB != "b" {
				t.Errorf("UpdateFCC returned %+v", got)
			}
			return err
		}},
		{"UpdateFCCStatus", http.MethodPut, apiPath + "/foreignclusterconnections/a-b/status", func(c *Client) error {
			_, err := c.UpdateFCCStatus(ctx, fcc)
			return err
		}},
		{"DeleteRelayPeer", http.MethodDelete, apiPath + "/namespaces/ns/relaypeers/b", func(c *Client) error {
			return c.DeleteRelayPeer(ctx, "ns", "b")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake(t, "", reply(http.StatusOK, fcc))
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			r := f.last(t)
			if r.method != tc.method || r.path != tc.path {
				t.Errorf("%s %s, want %s %s", r.method, r.path, tc.method, tc.path)
			}
			if tc.method == http.MethodPut {
				if spec, _ := r.body["spec"].(map[string]any); spec["clusterA"] != "a" || r.body["metadata"].(map[string]any)["resourceVersion"] != "7" {
					t.Errorf("body %v, want the FCC with its resourceVersion", r.body)
				}
			}
		})
	}
}

// TestErrorsSayWhatFailed: a refused or failed request's error names the
// object and the operation, and keeps the API server's reason for
// apierrors.
func TestErrorsSayWhatFailed(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		answer http.HandlerFunc
		call   func(c *Client) error
		prefix string
		is     func(error) bool
	}{
		{"a refused status", statusError(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, `RelayPeer.relay.liqo-relay.io "b" is invalid: status.rtt: Invalid value`),
			func(c *Client) error { return c.ApplyRelayPeerStatus(ctx, "ns", "b", v1alpha1.RelayPeerStatus{}) },
			"applying RelayPeer ns/b status: ", apierrors.IsInvalid},
		{"a conflicting update", statusError(http.StatusConflict, metav1.StatusReasonConflict, "the object has been modified"),
			func(c *Client) error {
				_, err := c.UpdateFCC(ctx, &v1alpha1.ForeignClusterConnection{ObjectMeta: meta("", "a-b")})
				return err
			},
			"updating ForeignClusterConnection a-b: ", apierrors.IsConflict},
		{"a status update forbidden", statusError(http.StatusForbidden, metav1.StatusReasonForbidden, "cannot update"),
			func(c *Client) error {
				_, err := c.UpdateFCCStatus(ctx, &v1alpha1.ForeignClusterConnection{ObjectMeta: meta("", "a-b")})
				return err
			},
			"updating the status of ForeignClusterConnection a-b: ", apierrors.IsForbidden},
		{"a missing Relay", statusError(http.StatusNotFound, metav1.StatusReasonNotFound, `relays.relay.liqo-relay.io "relay-a" not found`),
			func(c *Client) error { _, err := c.GetRelay(ctx, "ns", "relay-a"); return err },
			`relays.relay.liqo-relay.io "relay-a" not found`, apierrors.IsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newFake(t, "", tc.answer)
			err := tc.call(c)
			if err == nil || !strings.HasPrefix(err.Error(), tc.prefix) || !tc.is(err) {
				t.Errorf("err %v, want one starting %q that keeps the API server's reason", err, tc.prefix)
			}
		})
	}
}

func TestNewSetsTheUserAgent(t *testing.T) {
	for _, ua := range []string{"liqo-relay", ""} {
		c, f := newFake(t, ua, reply(http.StatusOK, v1alpha1.Relay{TypeMeta: typeMeta("Relay")}))
		if _, err := c.GetRelay(context.Background(), "ns", "r"); err != nil {
			t.Fatal(err)
		}
		want := ua
		if want == "" {
			want = rest.DefaultKubernetesUserAgent()
		}
		if got := f.last(t).userAgent; got != want {
			t.Errorf("user agent %q, want %q", got, want)
		}
	}
}
