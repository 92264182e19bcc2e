package operator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// emptyAPIServer answers like an API server that has none of the objects
// the controller watches: every list is empty, and every watch (after the
// bookmark that ends a streamed list's initial events) stays open without
// events until the client goes.
func emptyAPIServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(r.URL.Path, "/") // "", "apis", group, version, resource
		if len(parts) != 5 || parts[1] != "apis" || r.Method != http.MethodGet {
			http.Error(w, "not served by this test", http.StatusNotFound)
			return
		}
		apiVersion := parts[2] + "/" + parts[3]
		kind := map[string]string{"foreignclusterconnections": "ForeignClusterConnection", "foreignclusters": "ForeignCluster",
			"configurations": "Configuration", "ips": "IP"}[parts[4]]
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprintf(w, `{"apiVersion":%q,"kind":"%sList","metadata":{"resourceVersion":"1"},"items":[]}`, apiVersion, kind)
			return
		}
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"apiVersion":%q,"kind":%q,"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", apiVersion, kind)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func kubeconfigFor(t *testing.T, server string) string {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(t *testing.T, url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRunWiresItsParts runs the whole process without leader election
// against an API server with nothing to reconcile: the controller starts,
// its caches sync, the probes and metrics say so, and Run returns nil once
// ctx ends.
func TestRunWiresItsParts(t *testing.T) {
	srv := emptyAPIServer(t)
	metrics, health := freeAddr(t), freeAddr(t)
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Kubeconfig: kubeconfigFor(t, srv.URL), Namespace: "liqo-relay", ClusterID: "cons-c",
			MetricsListen: metrics, HealthListen: health, Ready: func() { close(ready) },
		})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run returned before the caches synced: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the controller's caches did not sync against the empty API server")
	}
	if code, body := httpGet(t, "http://"+health+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once synced: %d %q", code, body)
	}
	if _, body := httpGet(t, "http://"+metrics+"/metrics"); !strings.Contains(body, "relay_operator_leader 1") {
		t.Errorf("/metrics while running the controller has no relay_operator_leader 1")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after ctx ended: %v, want nil", err)
	}
}

func TestRunRefusesWithoutNamespace(t *testing.T) {
	err := Run(context.Background(), Options{Kubeconfig: kubeconfigFor(t, "https://192.0.2.1:6443")})
	if err == nil || !strings.Contains(err.Error(), "--namespace is required") {
		t.Errorf("err %v, want --namespace is required", err)
	}
}
