package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// webhookRun is one relay inject process (webhook.Run) in the test.
type webhookRun struct {
	cancel  context.CancelFunc
	done    chan error
	metrics string
}

func startWebhook(t *testing.T, kubeconfig, listen, certDir, sidecar string) *webhookRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [3]net.Addr, 1)
	w := &webhookRun{cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- Run(ctx, Options{
			Listen: listen, MetricsListen: "127.0.0.1:0", HealthListen: "127.0.0.1:0",
			Namespace: "liqo-relay", Service: "liqo-relay-inject", WebhookConfig: "liqo-relay-inject",
			CertDir: certDir, SidecarFile: sidecar, Kubeconfig: kubeconfig, ExtraHosts: []string{"127.0.0.1"},
			Ready: func(a, b, c net.Addr) { ready <- [3]net.Addr{a, b, c} },
			Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}()
	select {
	case a := <-ready:
		w.metrics = "http://" + a[1].String() + "/metrics"
	case err := <-w.done:
		cancel()
		t.Fatalf("relay inject: %v", err)
	}
	t.Cleanup(w.stop)
	return w
}

func (w *webhookRun) stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
		w.cancel = nil
	}
}

// tokenless blanks the random name of the API server's token volume.
func tokenless(c corev1.Container) corev1.Container {
	c = *c.DeepCopy()
	for i := range c.VolumeMounts {
		if strings.HasPrefix(c.VolumeMounts[i].Name, "kube-api-access-") {
			c.VolumeMounts[i].Name = "kube-api-access"
		}
	}
	return c
}

func containerNames(p *corev1.Pod) []string {
	var n []string
	for _, c := range p.Spec.Containers {
		n = append(n, c.Name)
	}
	return n
}

// TestWebhookWithRealAPIServer registers relay inject with a real
// kube-apiserver (real TLS, the caBundle the webhook wrote) and creates
// pods through it.
func TestWebhookWithRealAPIServer(t *testing.T) {
	c := injectCluster(t)
	listen := registerWebhook(t, c)
	dir := t.TempDir()
	sidecar := filepath.Join(dir, "sidecar.yaml")
	sc, _ := os.ReadFile("testdata/sidecar.yaml")
	if err := os.WriteFile(sidecar, []byte(strings.Replace(string(sc), "localClusterID: provider-a\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "certs")
	w := startWebhook(t, c.Kubeconfig, listen, certDir, sidecar)

	cs := kubernetes.NewForConfigOrDie(c.Config(t))
	ctx := context.Background()
	checkCABundle(ctx, t, cs, listen)
	create := func(ns string, p *corev1.Pod) *corev1.Pod {
		t.Helper()
		p = p.DeepCopy()
		p.Namespace = ns
		out, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %s/%s: %v", ns, p.Name, err)
		}
		return out
	}
	checkInjection(t, create)

	// The controller made the gateway's objects.
	k8stest.Eventually(t, "the relay Service", func() string {
		svc, err := cs.CoreV1().Services(testNS).Get(ctx, "liqo-relay-"+testGateway, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if svc.Spec.Selector[ActiveLabel] != "true" || len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].Kind != "MutatingWebhookConfiguration" {
			return "unexpected Service " + svc.String()
		}
		return ""
	})
	if _, err := cs.RbacV1().RoleBindings(testNS).Get(ctx, "liqo-relay-"+testGateway, metav1.GetOptions{}); err != nil {
		t.Errorf("RoleBinding: %v", err)
	}

	// 5. The webhook down: the pod is created without it (failurePolicy
	// Ignore) ...
	w.stop()
	gw4 := liqoGatewayPod(t)
	gw4.GenerateName, gw4.Name = "", "gw-4"
	if n := containerNames(create(testNS, gw4)); strings.Join(n, ",") != "gateway,wireguard,geneve" {
		t.Errorf("webhook down: containers %v", n)
	}
	// ... and once it is back, the controller reports it.
	w = startWebhook(t, c.Kubeconfig, listen, certDir, sidecar)
	checkMissingReported(t, c, w)

	// 6. The peering goes: Liqo deletes the GatewayServer and its pods; the
	// controller deletes the gateway's objects.
	c.Kubectl(t, "-n", testNS, "delete", "gatewayservers.networking.liqo.io", testGateway)
	c.Kubectl(t, "-n", testNS, "delete", "pods", "--all", "--grace-period=0", "--force")
	k8stest.Eventually(t, "the gone gateway's objects deleted", func() string {
		var left []string
		for _, kind := range []string{"rolebinding", "service", "secret", "relays.relay.liqo-relay.io"} {
			out, _ := c.KubectlErr("-n", testNS, "get", kind, "-l", "app.kubernetes.io/managed-by="+ManagedBy, "-o", "name")
			if strings.TrimSpace(out) != "" {
				left = append(left, strings.Fields(out)...)
			}
		}
		return strings.Join(left, " ")
	})
}

// injectCluster starts an API server with what Liqo puts there: its
// namespace with the cluster-ID ConfigMap (the test's sidecar file does not
// set localClusterID), the tenant namespace with the gateway's
// ServiceAccount and GatewayServer, and a namespace that opts out.
func injectCluster(t *testing.T) *k8stest.Cluster {
	// Liqo's gateway container is privileged.
	c := k8stest.Start(t, "inject", "", "K8S_APISERVER_ARGS=--allow-privileged=true")
	c.InstallCRDs(t)
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(k8stest.Root(), "test", "fixtures", "liqo-v1.2.0", "crds", "networking.liqo.io_gatewayservers.yaml"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/gatewayservers.networking.liqo.io")
	c.InstallLiqoClusterID(t, testLocal)
	c.KubectlIn(t, `
apiVersion: v1
kind: Namespace
metadata: {name: `+testNS+`}
---
apiVersion: v1
kind: Namespace
metadata: {name: opted-out, labels: {relay.liqo-relay.io/inject: disabled}}
---
apiVersion: networking.liqo.io/v1beta1
kind: GatewayServer
metadata: {name: `+testGateway+`, namespace: `+testNS+`}
spec: {}
`, "apply", "-f", "-")
	for _, ns := range []string{testNS, "opted-out"} {
		for _, sa := range []string{"default", testGateway} {
			c.Kubectl(t, "-n", ns, "create", "serviceaccount", sa)
		}
	}
	return c
}

// registerWebhook applies testdata/webhook-config.yaml, by URL to a port
// it picks and with no caBundle, and returns the address to serve on.
func registerWebhook(t *testing.T, c *k8stest.Cluster) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	ln.Close()
	raw, err := os.ReadFile("testdata/webhook-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfgObj map[string]any
	if err := yaml.Unmarshal(raw, &cfgObj); err != nil {
		t.Fatal(err)
	}
	cfgObj["webhooks"].([]any)[0].(map[string]any)["clientConfig"] = map[string]any{"url": "https://" + listen + "/mutate"}
	js, _ := json.Marshal(cfgObj)
	c.KubectlIn(t, string(js), "apply", "-f", "-")
	return listen
}

// checkCABundle checks that the caBundle the webhook wrote verifies the
// certificate it serves on listen.
func checkCABundle(ctx context.Context, t *testing.T, cs kubernetes.Interface, listen string) {
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "liqo-relay-inject", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(mwc.Webhooks[0].ClientConfig.CABundle) {
		t.Fatal("no caBundle written")
	}
	conn, err := tls.Dial("tcp", listen, &tls.Config{RootCAs: pool, ServerName: "liqo-relay-inject.liqo-relay.svc"})
	if err != nil {
		t.Fatalf("TLS to the webhook with its caBundle: %v", err)
	}
	conn.Close()
}

// checkInjection creates pods through the API server with the webhook up:
// only a gateway pod outside an opted-out namespace, not injected yet, gets
// the sidecar, and Liqo's containers stay as the API server defaults them.
func checkInjection(t *testing.T, create func(ns string, p *corev1.Pod) *corev1.Pod) {
	// 1. An opted-out namespace: no sidecar (namespaceSelector). The pod,
	// defaulted by the API server, is the reference for Liqo's containers.
	gw3 := liqoGatewayPod(t)
	gw3.GenerateName, gw3.Name = "", "gw-3"
	ref := create("opted-out", gw3)
	if n := containerNames(ref); strings.Join(n, ",") != "gateway,wireguard,geneve" {
		t.Errorf("opted-out namespace: containers %v", n)
	}

	// 2. A gateway pod from Liqo's server template gets the sidecar;
	// Liqo's containers are untouched.
	gw := liqoGatewayPod(t)
	gw.GenerateName, gw.Name = "", "gw-1"
	got := create(testNS, gw)
	if n := containerNames(got); strings.Join(n, ",") != "gateway,wireguard,geneve,relay" {
		t.Fatalf("gateway pod containers %v, want Liqo's three and relay", n)
	}
	for i := range 3 {
		as, _ := json.Marshal(tokenless(got.Spec.Containers[i]))
		bs, _ := json.Marshal(tokenless(ref.Spec.Containers[i]))
		if string(as) != string(bs) {
			t.Errorf("container %s changed:\n%s\n%s", ref.Spec.Containers[i].Name, bs, as)
		}
	}
	if got.Annotations[InjectedAnnotation] != testLocal {
		t.Errorf("relay name %q, want the local cluster ID %q read from Liqo's ConfigMap", got.Annotations[InjectedAnnotation], testLocal)
	}

	// 3. A non-gateway pod does not.
	if n := containerNames(create(testNS, plainPod())); strings.Join(n, ",") != "web" {
		t.Errorf("plain pod containers %v", n)
	}

	// 4. An already injected pod is created unchanged.
	inj := injectedPod(t, liqoGatewayPod(t), testSidecar(t), testLocal)
	inj.GenerateName, inj.Name = "", "gw-2"
	got = create(testNS, inj)
	if n := containerNames(got); strings.Join(n, ",") != "gateway,wireguard,geneve,relay" {
		t.Errorf("injected pod containers %v", n)
	}
	if len(got.Spec.Volumes) != len(inj.Spec.Volumes)+1 { // + the API server's token volume
		t.Errorf("injected pod volumes %d, want %d", len(got.Spec.Volumes), len(inj.Spec.Volumes)+1)
	}
}

// checkMissingReported waits for the webhook w to report gateway pod gw-4,
// created while it was down, in its metric and in an event.
func checkMissingReported(t *testing.T, c *k8stest.Cluster, w *webhookRun) {
	k8stest.Eventually(t, "relay_inject_missing_sidecar", func() string {
		resp, err := http.Get(w.metrics)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		want := `relay_inject_missing_sidecar{gateway="` + testGateway + `",namespace="` + testNS + `"} 1`
		if !strings.Contains(string(body), want) {
			return "no " + want
		}
		return ""
	})
	k8stest.Eventually(t, "the RelaySidecarMissing event", func() string {
		out, _ := c.KubectlErr("-n", testNS, "get", "events.events.k8s.io", "-o", "jsonpath={range .items[*]}{.reason}/{.regarding.name} {end}")
		if !strings.Contains(out, "RelaySidecarMissing/gw-4") {
			return "events: " + out
		}
		return ""
	})
}
