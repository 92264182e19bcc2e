package fakeapi

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		path, apiVersion, resource string
		ok                         bool
	}{
		{"/api/v1/pods", "v1", "pods", true},
		{"/api/v1/namespaces/ns/pods", "v1", "pods", true},
		{"/apis/ipam.liqo.io/v1alpha1/ips", "ipam.liqo.io/v1alpha1", "ips", true},
		{"/apis/ipam.liqo.io/v1alpha1/namespaces/ns/ips", "ipam.liqo.io/v1alpha1", "ips", true},
		{"/api/v1/namespaces/ns/pods/p", "", "", false},
		{"/healthz", "", "", false},
	} {
		v, r, ok := parse(tc.path)
		if v != tc.apiVersion || r != tc.resource || ok != tc.ok {
			t.Errorf("%s: %q %q %v, want %q %q %v", tc.path, v, r, ok, tc.apiVersion, tc.resource, tc.ok)
		}
	}
}

func TestEmpty(t *testing.T) {
	srv := Empty(t, map[string]string{"pods": "Pod"})
	get := func(ctx context.Context, path string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		return http.DefaultClient.Do(req)
	}
	resp, err := get(context.Background(), "/api/v1/pods")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}`; string(body) != want {
		t.Errorf("list: %s, want %s", body, want)
	}
	if resp, err := get(context.Background(), "/api/v1/services"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown resource: %v %v, want 404", resp.StatusCode, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err = get(ctx, "/api/v1/pods?watch=true&sendInitialEvents=true")
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 4096)
	n, _ := resp.Body.Read(line)
	if !strings.Contains(string(line[:n]), `"k8s.io/initial-events-end":"true"`) {
		t.Errorf("a streamed list: %s, want the bookmark that ends its initial events", line[:n])
	}
	cancel()
	resp.Body.Close()
}
