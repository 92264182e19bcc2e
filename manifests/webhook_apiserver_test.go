package manifests

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-relay/relay/build/manifestgen"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/webhook"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

const (
	glueLocal   = "provider-a"
	glueGateway = "consumer-1"
	glueTenant  = "liqo-tenant-consumer-1"
)

// liqoGatewayPod is a gateway pod as Liqo's Deployment makes it from its
// v1.2.0 server template, with the labels Liqo's controllers add.
func liqoGatewayPod(t *testing.T) *corev1.Pod {
	t.Helper()
	pod := k8stest.LiqoGatewayPod(t, glueGateway, glueTenant)
	pod.Name, pod.Namespace = "gw-1", glueTenant
	pod.Labels[webhook.GatewayNameLabel] = glueGateway
	pod.Labels[webhook.ActiveLabel] = "true"
	return pod
}

// TestChartWebhookWithRealAPIServer installs the chart's provider side
// (CRDs, RBAC, the webhook's objects) on a real kube-apiserver and runs
// relay inject in-process with the chart Deployment's arguments, parsed
// by the command's flag set, under the chart's ServiceAccount (a token
// for it: only the chart's RBAC applies) and with the chart's sidecar
// file. The only changes are what a process outside a cluster needs:
// local listen addresses, a kubeconfig, a certificate directory, and the
// webhook configuration's clientConfig as a URL (no Service network here).
// A gateway pod from Liqo's server template then gets the sidecar, and the
// controller writes the gateway's objects: every right it uses is the
// chart's.
func TestChartWebhookWithRealAPIServer(t *testing.T) {
	h := helm(t)
	// Liqo's gateway container is privileged.
	c := k8stest.Start(t, "chartinject", "", "K8S_APISERVER_ARGS=--allow-privileged=true")
	v := variant{name: "provider", sets: append(append([]string{}, manifestgen.Bases[1].Sets...), "providerGrant.consumers[0].clusterID="+glueGateway, "sidecar.dns.enabled=true")}
	crds, rest := splitCRDs(v.render(t, h))
	c.KubectlIn(t, crds, "apply", "--server-side", "-f", "-")
	liqoGatewaySide(t, c)
	c.KubectlIn(t, rest, "apply", "--server-side", "-f", "-")

	objs := decodeAll(t, v.name, v.render(t, h))
	name := "provider-liqo-relay-inject"
	inj := runChartInject(t, c, objs, "provider", name)
	ctx, admin, saClient, metricsURL := context.Background(), inj.admin, inj.sa, inj.metricsURL

	// The caBundle was written under the chart's RBAC.
	mwc, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(mwc.Webhooks[0].ClientConfig.CABundle) {
		t.Fatal("no caBundle written")
	}

	// A gateway pod from Liqo's template gets the chart's sidecar.
	got, err := admin.CoreV1().Pods(glueTenant).Create(ctx, liqoGatewayPod(t), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ct := range got.Spec.Containers {
		names = append(names, ct.Name)
	}
	if strings.Join(names, ",") != "gateway,wireguard,geneve,relay" {
		t.Fatalf("gateway pod containers %v, want Liqo's three and relay", names)
	}
	if got.Annotations[webhook.InjectedAnnotation] != glueLocal || got.Spec.Containers[3].Image != "ghcr.io/liqo-relay/relay:0.1.0" {
		t.Errorf("relay %q, image %q", got.Annotations[webhook.InjectedAnnotation], got.Spec.Containers[3].Image)
	}

	// The controller wrote every per-gateway object with the chart's rights.
	obj := "liqo-relay-" + glueGateway
	k8stest.Eventually(t, "the gateway's objects", func() string {
		var missing []string
		for _, kind := range []string{"rolebinding/" + obj, "service/" + obj, "networkpolicy/" + obj + "-metrics", "secret/relay-key", "relays.relay.liqo-relay.io/" + glueLocal} {
			if out, err := c.KubectlErr("-n", glueTenant, "get", kind); err != nil {
				missing = append(missing, kind+": "+strings.TrimSpace(out))
			}
		}
		return strings.Join(missing, "; ")
	})
	// The RoleBinding gives the gateway's ServiceAccount the relay's rights.
	sa := "system:serviceaccount:" + glueTenant + ":" + glueGateway
	for _, q := range [][]string{{"list", "relaypeers.relay.liqo-relay.io"}, {"patch", "relays.relay.liqo-relay.io/status"}, {"get", "secrets/relay-key"}} {
		if out, err := c.KubectlErr("auth", "can-i", "--as", sa, "-n", glueTenant, q[0], q[1]); err != nil || strings.TrimSpace(out) != "yes" {
			t.Errorf("the relay cannot %s %s: %s", q[0], q[1], out)
		}
	}
	checkDNSWiring(t, c, admin, got)
	// The columns manifests/README.md tells users to check.
	c.KubectlIn(t, `
apiVersion: relay.liqo-relay.io/v1alpha1
kind: RelayPeer
metadata: {name: consumer-1-provider-b, namespace: `+glueTenant+`}
spec: {publicKey: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=}
---
apiVersion: relay.liqo-relay.io/v1alpha1
kind: ForeignClusterConnection
metadata: {name: a-b}
spec: {clusterA: provider-a, clusterB: provider-b}
`, "apply", "-f", "-")
	for _, q := range []struct {
		args    []string
		columns []string
	}{
		{[]string{"-n", glueTenant, "get", "relays,relaypeers"}, []string{"PUBLICKEY", "ENDPOINTS", "READY", "ACTIVE", "REACHABLE", "RTT"}},
		{[]string{"get", "fcc"}, []string{"A", "B", "PHASE", "A->B", "B->A"}},
	} {
		out := c.Kubectl(t, q.args...)
		var headers []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "NAME ") {
				headers = append(headers, strings.Fields(l)...)
			}
		}
		for _, col := range q.columns {
			if !slices.Contains(headers, col) {
				t.Errorf("kubectl %s: no column %s:\n%s", strings.Join(q.args, " "), col, out)
			}
		}
	}

	// What the chart's admission policies refuse that RBAC allows.
	checkSecretPolicies(t, admin, saClient, "provider", glueTenant)
	checkWebhookConfigPolicy(t, admin, saClient, "provider", name)

	// No sync failed for want of a right.
	body := scrape(t, metricsURL)
	if strings.Contains(body, `relay_inject_syncs_total{result="error"}`) || !strings.Contains(body, `relay_inject_syncs_total{result="ok"}`) {
		t.Errorf("controller syncs:\n%s", grep(body, "relay_inject_syncs_total"))
	}

	// The peering goes: the controller deletes the gateway's objects with
	// the chart's rights, through its admission policies.
	c.Kubectl(t, "-n", glueTenant, "delete", "gatewayservers.networking.liqo.io", glueGateway)
	c.Kubectl(t, "-n", glueTenant, "delete", "pods", "--all", "--grace-period=0", "--force")
	k8stest.Eventually(t, "the gone gateway's objects deleted under the chart's RBAC", func() string {
		out, _ := c.KubectlErr("get", "rolebindings,services,networkpolicies,secrets,relays.relay.liqo-relay.io,clusterrolebindings", "-A",
			"-l", "app.kubernetes.io/managed-by="+webhook.ManagedBy, "-o", "name")
		return strings.TrimSpace(out)
	})
	if body := scrape(t, metricsURL); strings.Contains(body, `relay_inject_syncs_total{result="error"}`) {
		t.Errorf("a sync failed while the gateway went (a missing right?):\n%s", grep(body, "relay_inject_syncs_total"))
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// checkDNSWiring: with sidecar.dns.enabled, the injected relay answers on
// the pod's address, its file has the consumer's zone, and the controller
// made, under the chart's RBAC and policies, the ClusterIP Service with
// the CoreDNS block for that zone and the Service's ClusterIP, and the
// ClusterRoleBinding that lets the relay read EndpointSlices everywhere.
func checkDNSWiring(t *testing.T, c *k8stest.Cluster, admin kubernetes.Interface, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	relay := pod.Spec.Containers[3]
	if !slices.Contains(relay.Args, "--dns-listen=$(POD_IP):5353") {
		t.Errorf("relay args %v", relay.Args)
	}
	cfg, err := config.Parse([]byte(pod.Annotations[webhook.ConfigAnnotation]))
	if err != nil {
		t.Fatal(err)
	}
	zone := glueGateway + ".relay.local."
	if cfg.DNSServer.Zone != zone {
		t.Errorf("relay zone %q, want %q", cfg.DNSServer.Zone, zone)
	}
	name := "liqo-relay-" + glueGateway + "-dns"
	var svc *corev1.Service
	k8stest.Eventually(t, "the DNS Service with its CoreDNS block", func() string {
		svc, err = admin.CoreV1().Services(glueTenant).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if svc.Annotations[webhook.CoreDNSAnnotation] == "" {
			return "no " + webhook.CoreDNSAnnotation + " annotation yet"
		}
		return ""
	})
	if want := webhook.CoreDNSBlock(zone, svc.Spec.ClusterIP, 53); svc.Spec.ClusterIP == "" || svc.Annotations[webhook.CoreDNSAnnotation] != want {
		t.Errorf("CoreDNS block\n%s\nwant (zone %s, ClusterIP %s)\n%s", svc.Annotations[webhook.CoreDNSAnnotation], zone, svc.Spec.ClusterIP, want)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 53 || svc.Spec.Ports[1].Protocol != corev1.ProtocolTCP {
		t.Errorf("DNS Service spec %+v", svc.Spec)
	}
	// The block as a user gets it.
	out := c.Kubectl(t, "get", "svc", "-A", "-l", webhook.DNSServiceLabel+"=true", "-o", `jsonpath={range .items[*]}{.metadata.annotations.relay\.liqo-relay\.io/coredns}{end}`)
	if out != svc.Annotations[webhook.CoreDNSAnnotation] {
		t.Errorf("kubectl jsonpath gives\n%s", out)
	}
	sa := "system:serviceaccount:" + glueTenant + ":" + glueGateway
	for _, q := range [][]string{{"-n", "provider", "list", "endpointslices.discovery.k8s.io"}, {"-n", "provider", "watch", "endpointslices.discovery.k8s.io"}, {"get", "namespaces/" + glueTenant}} {
		if out, err := c.KubectlErr(append([]string{"auth", "can-i", "--as", sa}, q...)...); err != nil || !strings.HasSuffix(strings.TrimSpace(out), "yes") {
			t.Errorf("the relay cannot %v: %s", q, out)
		}
	}
}

// liqoGatewaySide puts on the cluster what Liqo has there for one peering
// of a provider: the GatewayServer CRD, Liqo's namespace with the
// cluster-ID ConfigMap (the chart's sidecar has no localClusterID), the
// tenant namespace, and the gateway's ServiceAccount and GatewayServer;
// and the namespace provider, where the tests install the chart.
func liqoGatewaySide(t *testing.T, c *k8stest.Cluster) {
	t.Helper()
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(fixtureDir, "..", "crds", "networking.liqo.io_gatewayservers.yaml"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	c.InstallLiqoClusterID(t, glueLocal)
	c.KubectlIn(t, `
apiVersion: v1
kind: Namespace
metadata: {name: `+glueTenant+`}
---
apiVersion: v1
kind: Namespace
metadata: {name: provider}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: `+glueGateway+`, namespace: `+glueTenant+`}
---
apiVersion: networking.liqo.io/v1beta1
kind: GatewayServer
metadata: {name: `+glueGateway+`, namespace: `+glueTenant+`}
spec: {}
`, "apply", "-f", "-")
}
