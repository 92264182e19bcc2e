package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// The tests run the client against an httptest server that records each
// request and answers as a kube-apiserver would (JSON objects, lists, watch
// streams and Status errors); they check the requests' method, path, query
// and body, and how the client decodes the answers.

const apiPath = "/apis/" + v1alpha1.Group + "/v1alpha1"

// request is what the fake REST server saw of one request.
type request struct {
	method, path, contentType, userAgent string
	query                                url.Values
	body                                 map[string]any
}

type fakeREST struct {
	mu   sync.Mutex
	reqs []request
}

// last returns the one request the server saw.
func (f *fakeREST) last(t *testing.T) request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != 1 {
		t.Fatalf("%d requests, want 1: %+v", len(f.reqs), f.reqs)
	}
	return f.reqs[0]
}

// newFake starts a server that records every request and answers with
// answer, and returns a Client for it.
func newFake(t *testing.T, userAgent string, answer http.HandlerFunc) (*Client, *fakeREST) {
	f := &fakeREST{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := request{method: r.Method, path: r.URL.Path, query: r.URL.Query(), contentType: r.Header.Get("Content-Type"), userAgent: r.UserAgent()}
		if b, _ := io.ReadAll(r.Body); len(b) > 0 {
			if err := json.Unmarshal(b, &req.body); err != nil {
				t.Errorf("%s %s: body is not JSON: %v", r.Method, r.URL.Path, err)
			}
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := New(&rest.Config{Host: srv.URL, UserAgent: userAgent})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

// reply answers with code and the JSON of v.
func reply(code int, v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
}

// statusError answers a failed request as the API server does.
func statusError(code int, reason metav1.StatusReason, msg string) http.HandlerFunc {
	return reply(code, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg})
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: kind}
}

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "7"}
}

func TestListAndGet(t *testing.T) {
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: v1alpha1.RelayLabel + "=relay-a"}
	for _, tc := range []struct {
		name   string
		path   string
		answer any
		call   func(c *Client) (string, error) // returns the names read
	}{
		{"ListRelayPeers", apiPath + "/namespaces/ns/relaypeers",
			v1alpha1.RelayPeerList{TypeMeta: typeMeta("RelayPeerList"), Items: []v1alpha1.RelayPeer{{ObjectMeta: meta("ns", "b")}, {ObjectMeta: meta("ns", "c")}}},
			func(c *Client) (string, error) {
				l, err := c.ListRelayPeers(ctx, "ns", opts)
				return names(l.Items, func(p v1alpha1.RelayPeer) string { return p.Name }), err
			}},
		{"ListRelays", apiPath + "/namespaces/ns/relays",
			v1alpha1.RelayList{TypeMeta: typeMeta("RelayList"), Items: []v1alpha1.Relay{{ObjectMeta: meta("ns", "relay-a")}}},
			func(c *Client) (string, error) {
				l, err := c.ListRelays(ctx, "ns", opts)
				return names(l.Items, func(r v1alpha1.Relay) string { return r.Name }), err
			}},
		{"ListFCCs", apiPath + "/foreignclusterconnections",
			v1alpha1.ForeignClusterConnectionList{TypeMeta: typeMeta("ForeignClusterConnectionList"), Items: []v1alpha1.ForeignClusterConnection{{ObjectMeta: meta("", "a-b")}}},
			func(c *Client) (string, error) {
				l, err := c.ListFCCs(ctx, opts)
				return names(l.Items, func(f v1alpha1.ForeignClusterConnection) string { return f.Name }), err
			}},
		{"GetRelayPeer", apiPath + "/namespaces/ns/relaypeers/b",
			v1alpha1.RelayPeer{TypeMeta: typeMeta("RelayPeer"), ObjectMeta: meta("ns", "b"), Spec: v1alpha1.RelayPeerSpec{PublicKey: "K="}},
			func(c *Client) (string, error) {
				p, err := c.GetRelayPeer(ctx, "ns", "b")
				return p.Name + "," + p.Spec.PublicKey, err
			}},
		{"GetRelay", apiPath + "/namespaces/ns/relays/relay-a",
			v1alpha1.Relay{TypeMeta: typeMeta("Relay"), ObjectMeta: meta("ns", "relay-a"), Status: v1alpha1.RelayStatus{ListenPort: 51900}},
			func(c *Client) (string, error) {
				r, err := c.GetRelay(ctx, "ns", "relay-a")
				return fmt.Sprint(r.Name, ",", r.Status.ListenPort), err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake(t, "", reply(http.StatusOK, tc.answer))
			got, err := tc.call(c)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"ListRelayPeers": "b,c", "ListRelays": "relay-a", "ListFCCs": "a-b", "GetRelayPeer": "b,K=", "GetRelay": "relay-a,51900"}[tc.name]
			if got != want {
				t.Errorf("read %q, want %q", got, want)
			}
			r := f.last(t)
			if r.method != http.MethodGet || r.path != tc.path {
				t.Errorf("%s %s, want GET %s", r.method, r.path, tc.path)
			}
			if strings.HasPrefix(tc.name, "List") && r.query.Get("labelSelector") != opts.LabelSelector {
				t.Errorf("labelSelector %q, want %q", r.query.Get("labelSelector"), opts.LabelSelector)
			}
		})
	}
}

func names[T any](items []T, name func(T) string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return strings.Join(out, ",")
}

// stream answers a watch with one ADDED event of obj, then ends it.
func stream(obj any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "ADDED", "object": obj})
	}
}

func TestWatch(t *testing.T) {
	ctx := context.Background()
	opts := metav1.ListOptions{FieldSelector: "metadata.name=x", ResourceVersion: "7"}
	for _, tc := range []struct {
		name     string
		path     string
		obj      any
		wantType string
		watch    func(c *Client) (watch.Interface, error)
	}{
		{"WatchRelayPeers", apiPath + "/namespaces/ns/relaypeers", v1alpha1.RelayPeer{TypeMeta: typeMeta("RelayPeer"), ObjectMeta: meta("ns", "x")}, "*v1alpha1.RelayPeer",
			func(c *Client) (watch.Interface, error) { return c.WatchRelayPeers(ctx, "ns", opts) }},
		{"WatchRelays", apiPath + "/namespaces/ns/relays", v1alpha1.Relay{TypeMeta: typeMeta("Relay"), ObjectMeta: meta("ns", "x")}, "*v1alpha1.Relay",
			func(c *Client) (watch.Interface, error) { return c.WatchRelays(ctx, "ns", opts) }},
		{"WatchFCCs", apiPath + "/foreignclusterconnections", v1alpha1.ForeignClusterConnection{TypeMeta: typeMeta("ForeignClusterConnection"), ObjectMeta: meta("", "x")}, "*v1alpha1.ForeignClusterConnection",
			func(c *Client) (watch.Interface, error) { return c.WatchFCCs(ctx, opts) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newFake(t, "", stream(tc.obj))
			w, err := tc.watch(c)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			ev, ok := <-w.ResultChan()
			if !ok || ev.Type != watch.Added {
				t.Fatalf("event %+v (open %v), want ADDED", ev, ok)
			}
			if m, ok := ev.Object.(metav1.Object); !ok || m.GetName() != "x" || fmt.Sprintf("%T", ev.Object) != tc.wantType {
				t.Errorf("event object %T %v, want a %s named x", ev.Object, ev.Object, tc.wantType)
			}
			if _, open := <-w.ResultChan(); open {
				t.Error("the watch stays open after the server ended it")
			}
			r := f.last(t)
			if r.method != http.MethodGet || r.path != tc.path || r.query.Get("watch") != "true" ||
				r.query.Get("fieldSelector") != opts.FieldSelector || r.query.Get("resourceVersion") != "7" {
				t.Errorf("%s %s?%s, want a watch of %s from resourceVersion 7 by name", r.method, r.path, r.query.Encode(), tc.path)
			}
		})
	}
}
