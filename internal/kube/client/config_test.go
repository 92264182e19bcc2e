package client

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://192.0.2.10:6443
users:
- name: u
  user:
    token: t0ken
contexts:
- name: x
  context: {cluster: c, user: u, namespace: tenant-a}
current-context: x
`

func TestRESTConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://192.0.2.10:6443" || cfg.BearerToken != "t0ken" {
		t.Errorf("host %q, token %q: want the kubeconfig's", cfg.Host, cfg.BearerToken)
	}

	if _, err := RESTConfig(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.HasPrefix(err.Error(), "kubernetes: ") {
		t.Errorf("missing kubeconfig: err %v, want one starting with kubernetes:", err)
	}

	// Outside a pod there is no in-cluster configuration.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	if _, err := RESTConfig(""); !errors.Is(err, rest.ErrNotInCluster) {
		t.Errorf("in-cluster outside a pod: err %v, want rest.ErrNotInCluster", err)
	}
}
