package manifests

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-relay/relay/build/manifestgen"
	"github.com/liqo-relay/relay/internal/kube/consumer/operator"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// TestChartOperatorWithRealAPIServer installs the chart's consumer side
// (CRDs, the operator's RBAC) beside Liqo's CRDs on a real kube-apiserver
// and runs relay operator in-process with the chart Deployment's
// arguments, parsed by the command's flag set, under a token of the
// chart's ServiceAccount: it must win the chart's Lease and sync every
// cache (list and watch of each resource it reads), which it cannot
// without a right the chart forgot.
func TestChartOperatorWithRealAPIServer(t *testing.T) {
	h := helm(t)
	c := k8stest.Start(t, "chartop", "")
	v := variant{name: "consumer", sets: manifestgen.Bases[0].Sets}
	crds, rest := splitCRDs(v.render(t, h))
	c.KubectlIn(t, crds, "apply", "--server-side", "-f", "-")
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(fixtureDir, "..", "crds"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	c.InstallLiqoClusterID(t, "consumer-1")
	c.Kubectl(t, "create", "namespace", "consumer")
	c.KubectlIn(t, rest, "apply", "--server-side", "-f", "-")

	objs := decodeAll(t, v.name, v.render(t, h))
	name := "consumer-liqo-relay-operator"
	args := deploymentArgs(t, objs, name)
	if args[0] != "operator" {
		t.Fatalf("args %v", args)
	}
	fs, cl := operator.NewFlagSet()
	fs.SetOutput(io.Discard)
	local := []string{"--metrics-listen=127.0.0.1:0", "--health-listen=127.0.0.1:0",
		"--kubeconfig=" + c.ServiceAccountKubeconfig(t, "consumer", name)}
	if err := fs.Parse(append(args[1:], local...)); err != nil {
		t.Fatal(err)
	}
	if err := cl.Check(fs); err != nil {
		t.Fatal(err)
	}
	o := cl.Options
	ready := make(chan struct{})
	o.Ready = func() { close(ready) }
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- operator.Run(ctx, o) }()
	var stopped sync.Once
	stop := func() { stopped.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	// A deadline for a busy machine, not a timing assertion: without a
	// right, the caches never sync.
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("relay operator under the chart's ServiceAccount: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("relay operator under the chart's ServiceAccount: caches not synced or Lease not won (a missing right?)")
	}
	cs := kubernetes.NewForConfigOrDie(c.Config(t))
	lease, err := cs.CoordinationV1().Leases("consumer").Get(ctx, o.LeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		t.Errorf("the chart's Lease %s: %v %+v", o.LeaseName, err, lease)
	}
	// Stopped (its pod deleted, as by helm uninstall), it leaves no Lease.
	stop()
	if _, err := cs.CoordinationV1().Leases("consumer").Get(context.Background(), o.LeaseName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Lease %s after the operator stopped: %v, want it gone", o.LeaseName, err)
	}
}
