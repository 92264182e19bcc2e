package operator

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/test/k8s/fakeapi"
)

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
	srv := fakeapi.Empty(t, map[string]string{"foreignclusterconnections": "ForeignClusterConnection",
		"foreignclusters": "ForeignCluster", "configurations": "Configuration", "ips": "IP"})
	metrics, health := freeAddr(t), freeAddr(t)
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Kubeconfig: fakeapi.Kubeconfig(t, srv.URL), Namespace: "liqo-relay", ClusterID: "cons-c",
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
	err := Run(context.Background(), Options{Kubeconfig: fakeapi.Kubeconfig(t, "https://192.0.2.1:6443")})
	if err == nil || !strings.Contains(err.Error(), "--namespace is required") {
		t.Errorf("err %v, want --namespace is required", err)
	}
}
