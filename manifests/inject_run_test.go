package manifests

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-relay/relay/internal/kube/webhook"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// chartInject is relay inject running in-process for a test, as the chart
// deploys it.
type chartInject struct {
	admin, sa  kubernetes.Interface // the cluster's admin; the chart's ServiceAccount
	metricsURL string
	// stop ends it (also at the test's end); it returns what Run returned.
	stop func() error
}

// runChartInject runs relay inject in-process with the arguments of the
// chart's Deployment name in objs (release rel, in namespace rel),
// parsed by the command's flag set, under a token of the chart's
// ServiceAccount and with the chart's sidecar file. The only changes are
// what a process outside a cluster needs: local listen addresses, a
// kubeconfig, a certificate directory, and the webhook configuration's
// clientConfig as a URL (no Service network here). It returns once the
// chart's admission policies are in force and the webhook serves.
func runChartInject(t *testing.T, c *k8stest.Cluster, objs []map[string]any, rel, name string) *chartInject {
	t.Helper()
	args := deploymentArgs(t, objs, name)
	if args[0] != "inject" {
		t.Fatalf("args %v", args)
	}
	dir := t.TempDir()
	sidecar := filepath.Join(dir, "sidecar.yaml")
	if err := os.WriteFile(sidecar, []byte(sidecarFile(objs)), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()

	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(c.Config(t))
	patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/webhooks/0/clientConfig", "value": map[string]any{"url": "https://" + listen + webhook.WebhookPath}}})
	if _, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// The chart's arguments, then the local overrides (the last wins).
	fs, cl := webhook.NewFlagSet(func(string) string { return "" })
	fs.SetOutput(io.Discard)
	saKubeconfig := c.ServiceAccountKubeconfig(t, rel, name)
	local := []string{"--listen=" + listen, "--metrics-listen=127.0.0.1:0", "--health-listen=127.0.0.1:0",
		"--cert-dir=" + filepath.Join(dir, "certs"), "--sidecar=" + sidecar, "--extra-hosts=127.0.0.1",
		"--kubeconfig=" + saKubeconfig}
	if err := fs.Parse(append(args[1:], local...)); err != nil {
		t.Fatal(err)
	}
	if err := cl.Check(fs); err != nil {
		t.Fatal(err)
	}
	// The chart's admission policies are in force before relay inject
	// writes anything: its writes pass them.
	saClient := kubeconfigClient(t, saKubeconfig)
	waitForSecretPolicies(t, admin, saClient, rel, glueTenant)
	waitForWebhookConfigPolicy(t, saClient, rel, name)

	o := cl.Options
	metrics := make(chan string, 1)
	o.Ready = func(_, m, _ net.Addr) { metrics <- "http://" + m.String() + "/metrics" }
	o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- webhook.Run(rctx, o) }()
	var runErr error
	stopped := false
	stop := func() error {
		if !stopped {
			cancel()
			runErr, stopped = <-done, true
		}
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	inj := &chartInject{admin: admin, sa: saClient, stop: stop}
	select {
	case inj.metricsURL = <-metrics:
	case err := <-done:
		stopped, runErr = true, err
		t.Fatalf("relay inject under the chart's ServiceAccount: %v", err)
	}
	return inj
}
