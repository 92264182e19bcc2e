// Package k8stest starts real Kubernetes API servers for tests with
// test/k8s/cluster.sh (etcd and kube-apiserver, nothing else), and gives
// tests a kubectl and a client config for them. Every cluster a test
// starts is stopped in t.Cleanup, also when the test fails.
//
// The binaries are built once per machine by `make k8s-tools` (make test
// does it). Without them a test is skipped with a message, except in CI
// (CI=true), where it fails: a missing install step must not pass.
package k8stest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is one running API server.
type Cluster struct {
	Name       string
	Kubeconfig string
	bin        string
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

func script() string { return filepath.Join(repoRoot(), "test", "k8s", "cluster.sh") }

// Bin returns the directory of the built binaries, or skips t (fails it in
// CI) when they are not built.
func Bin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real kube-apiserver; not in -short")
	}
	out, err := exec.Command("bash", script(), "bin").Output()
	if err != nil {
		t.Fatalf("finding the k8s binaries: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	for _, b := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not built (%v): make test runs make k8s-tools first", b, err)
			}
			t.Skipf("needs a real kube-apiserver: run make k8s-tools once (about 10 minutes), make test does it")
		}
	}
	return bin
}

// Start starts a cluster named prefix-<random> and stops it when the test
// ends. env adds to the script's environment (K8S_ADDRESS=...). ns, when
// not empty, is a network namespace (ip netns) to start it in.
func Start(t testing.TB, prefix, netns string, env ...string) *Cluster {
	t.Helper()
	bin := Bin(t)
	var rb [3]byte
	_, _ = rand.Read(rb[:])
	name := prefix + "-" + hex.EncodeToString(rb[:])
	args := []string{script(), "up", name}
	if netns != "" {
		args = append([]string{"ip", "netns", "exec", netns, "bash"}, args...)
	} else {
		args = append([]string{"bash"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(append(os.Environ(), "K8S_TTL=1800"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script(), "down", name).CombinedOutput(); err != nil {
			t.Errorf("cluster.sh down %s: %v\n%s", name, err, out)
		}
	})
	if err != nil {
		t.Fatalf("cluster.sh up %s: %v\n%s", name, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	c := &Cluster{Name: name, Kubeconfig: lines[len(lines)-1], bin: bin}
	t.Logf("cluster %s up in %v", name, time.Since(start).Round(time.Millisecond))
	return c
}

// Kubectl runs kubectl against the cluster and returns its output,
// failing the test on error.
func (c *Cluster) Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := c.KubectlErr(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// KubectlErr runs kubectl and returns its combined output and error.
func (c *Cluster) KubectlErr(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// KubectlIn runs kubectl with stdin.
func (c *Cluster) KubectlIn(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := c.KubectlInErr(stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// KubectlInErr runs kubectl with stdin and returns its combined output
// and error.
func (c *Cluster) KubectlInErr(stdin string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Config returns a client config for the admin user.
func (c *Cluster) Config(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// InstallCRDs applies the project's CRDs server-side and waits until they
// are served.
func (c *Cluster) InstallCRDs(t testing.TB) {
	t.Helper()
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(repoRoot(), "manifests", "crds"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/relays.relay.liqo-relay.io", "crd/relaypeers.relay.liqo-relay.io")
}

// Root is the repository's root directory.
func Root() string { return repoRoot() }

// ServiceAccountKubeconfig creates ServiceAccount sa in namespace ns (if
// needed), requests a token for it and writes a kubeconfig that uses it,
// so that a process runs with the rights RBAC gives sa, not as admin.
func (c *Cluster) ServiceAccountKubeconfig(t testing.TB, ns, sa string) string {
	t.Helper()
	// kubectl create says "already exists" (not the reason AlreadyExists).
	if out, err := c.KubectlErr("-n", ns, "create", "serviceaccount", sa); err != nil && !strings.Contains(out, "already exists") {
		t.Fatalf("creating ServiceAccount %s/%s: %v\n%s", ns, sa, err, out)
	}
	token := strings.TrimSpace(c.Kubectl(t, "-n", ns, "create", "token", sa, "--duration=1h"))
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name, ai := range cfg.AuthInfos {
		ai.ClientCertificateData, ai.ClientKeyData = nil, nil
		ai.Token = token
		cfg.AuthInfos[name] = ai
	}
	for _, ctx := range cfg.Contexts {
		ctx.Namespace = ns
	}
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
