package manifests

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/build/manifestgen"
	"github.com/liqo-relay/relay/internal/kube/webhook"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// TestChartInstallUpgradeUninstall runs docs/release.md's commands on a
// real API server with Kubernetes' garbage collector: helm install of the
// provider side, relay inject (in-process, as the chart runs it) writing a
// gateway's objects, then the upgrade to a next release whose RelayPeer
// CRD has a new field (the CRDs server-side applied, then helm upgrade),
// then helm uninstall. The upgrade must serve the new field and keep every
// object and its status, and the relay's key Secret and LoadBalancer
// Service must be the same objects; the uninstall must leave nothing the
// controller wrote, in any namespace, and nothing of the release but the
// CRDs.
func TestChartInstallUpgradeUninstall(t *testing.T) {
	h := helm(t)
	c := k8stest.Start(t, "lifecycle", "", "K8S_APISERVER_ARGS=--allow-privileged=true")
	c.StartGarbageCollector(t)
	liqoGatewaySide(t, c)
	v := variant{name: "provider", sets: append(append([]string{}, manifestgen.Bases[1].Sets...), "providerGrant.consumers[0].clusterID="+glueGateway, "sidecar.dns.enabled=true")}
	helmRun := func(args ...string) string {
		t.Helper()
		out, err := runHelm(h, append(args, "--kubeconfig", c.Kubeconfig)...)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}

	// Install, and the controller's objects for a gateway pod.
	helmRun(append([]string{"install", "provider", chartDir, "-n", "provider"}, v.values()...)...)
	name := "provider-liqo-relay-inject"
	objs := decodeAll(t, v.name, v.render(t, h))
	inj := runChartInject(t, c, objs, "provider", name)
	ctx := context.Background()
	if _, err := inj.admin.CoreV1().Pods(glueTenant).Create(ctx, liqoGatewayPod(t), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	written := []string{"rolebinding", "service", "networkpolicy", "secret", "relays.relay.liqo-relay.io"}
	k8stest.Eventually(t, "the gateway's objects", func() string {
		if n := len(managed(t, c, append(written, "clusterrolebinding"))); n != 7 {
			return "want 7 objects (the DNS Service and ClusterRoleBinding too), have " + strings.Join(managed(t, c, append(written, "clusterrolebinding")), " ")
		}
		return ""
	})
	obj := "liqo-relay-" + glueGateway
	svc, err := inj.admin.CoreV1().Services(glueTenant).Get(ctx, obj, metav1.GetOptions{})
	if err != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		t.Fatalf("the relay's Service: %v %+v", err, svc.Spec.Type)
	}
	key, err := inj.admin.CoreV1().Secrets(glueTenant).Get(ctx, "relay-key", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A RelayPeer with a status, as the relay reports it. The field the
	// next release's CRD adds is unknown to this one.
	peer := func(name, extra string) string {
		return "apiVersion: relay.liqo-relay.io/v1alpha1\nkind: RelayPeer\nmetadata: {name: " + name + ", namespace: " + glueTenant +
			"}\nspec: {publicKey: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" + extra + "}\n"
	}
	if out, err := c.KubectlInErr(peer("early", ", nextRelease: early"), "apply", "-f", "-"); err == nil || !strings.Contains(out, `unknown field "spec.nextRelease"`) {
		t.Fatalf("this release's CRD takes the next one's field: %v\n%s", err, out)
	}
	c.KubectlIn(t, peer("provider-b", ""), "apply", "-f", "-")
	c.Kubectl(t, "-n", glueTenant, "patch", "relaypeers.relay.liqo-relay.io", "provider-b", "--subresource=status", "--type=merge",
		"-p", `{"status":{"activePath":"direct","reachable":true,"rtt":"1.5ms"}}`)

	// Upgrade, as docs/release.md says: the CRDs, then helm upgrade. First
	// the webhook's clientConfig as the chart has it (the test pointed it
	// at the in-process webhook's URL), for Helm's merge.
	cc, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/webhooks/0/clientConfig/service",
		"value": get(find(objs, "MutatingWebhookConfiguration", name), "webhooks", 0, "clientConfig", "service")},
		{"op": "remove", "path": "/webhooks/0/clientConfig/url"}})
	c.Kubectl(t, "patch", "mutatingwebhookconfigurations", name, "--type=json", "-p", string(cc))
	next := nextChart(t)
	c.Kubectl(t, "apply", "--server-side", "--force-conflicts", "--field-manager=liqo-relay-crds", "-f", filepath.Join(next, "crds"))
	helmRun("upgrade", "provider", next, "-n", "provider", "--reset-then-reuse-values")
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/relaypeers.relay.liqo-relay.io")
	c.KubectlIn(t, peer("provider-c", ", nextRelease: kept"), "apply", "-f", "-")
	if got := c.Kubectl(t, "-n", glueTenant, "get", "relaypeers.relay.liqo-relay.io", "provider-c", "-o", "jsonpath={.spec.nextRelease}"); got != "kept" {
		t.Errorf("after the upgrade the new field is not served: %q", got)
	}
	if got := c.Kubectl(t, "-n", glueTenant, "get", "relaypeers.relay.liqo-relay.io", "provider-b", "-o", "jsonpath={.status.activePath} {.status.rtt}"); got != "direct 1.5ms" {
		t.Errorf("the RelayPeer's status after the upgrade: %q, want \"direct 1.5ms\"", got)
	}
	if got := helmRun("list", "-n", "provider", "-o", "json"); !strings.Contains(got, `"chart":"liqo-relay-0.2.0-next"`) {
		t.Errorf("helm list after the upgrade: %s", got)
	}
	// The values set at install stay; a default the next release changed
	// is the next release's.
	all := helmRun("get", "values", "provider", "-n", "provider", "--all", "-o", "json")
	if !strings.Contains(all, `"interval":"45s"`) || !strings.Contains(all, `"clusterID":"`+glueGateway+`"`) {
		t.Errorf("values after the upgrade: want the new default serviceMonitor.interval 45s and the install's clusterID:\n%s", all)
	}
	svc2, err := inj.admin.CoreV1().Services(glueTenant).Get(ctx, obj, metav1.GetOptions{})
	if err != nil || svc2.UID != svc.UID {
		t.Errorf("the relay's Service after the upgrade: %v, UID %s, want the same object %s", err, svc2.UID, svc.UID)
	}
	key2, err := inj.admin.CoreV1().Secrets(glueTenant).Get(ctx, "relay-key", metav1.GetOptions{})
	if err != nil || key2.UID != key.UID || string(key2.Data["privateKey"]) != string(key.Data["privateKey"]) {
		t.Errorf("the relay's key after the upgrade: %v: not the same Secret and key", err)
	}

	// Uninstall: the anchor goes, and the garbage collector takes the
	// rest, while relay inject still runs (its pod terminating).
	helmRun("uninstall", "provider", "-n", "provider", "--wait")
	k8stest.Eventually(t, "nothing the controller wrote left", func() string {
		return strings.Join(managed(t, c, append(written, "clusterrolebinding")), " ")
	})
	if err := inj.stop(); err != nil {
		t.Errorf("relay inject: %v", err)
	}
	if out, err := c.KubectlErr("-n", glueTenant, "get", "secret", "relay-key"); err == nil {
		t.Errorf("the relay's key Secret is left after helm uninstall:\n%s", out)
	}
	if left := c.Kubectl(t, "get", "all,rolebindings,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,serviceaccounts,configmaps,secrets",
		"-A", "-l", "app.kubernetes.io/instance=provider", "-o", "name"); strings.TrimSpace(left) != "" {
		t.Errorf("the release's objects left after helm uninstall:\n%s", left)
	}
	for _, crd := range []string{"relays", "relaypeers", "foreignclusterconnections"} {
		c.Kubectl(t, "get", "crd", crd+".relay.liqo-relay.io")
	}
}

// managed lists, as kind/name, the objects of the given kinds in every
// namespace that relay inject's controller wrote (its managed-by label).
func managed(t *testing.T, c *k8stest.Cluster, kinds []string) []string {
	t.Helper()
	out := c.Kubectl(t, "get", strings.Join(kinds, ","), "-A", "-l", "app.kubernetes.io/managed-by="+webhook.ManagedBy, "-o", "name")
	return strings.Fields(out)
}

// nextChart is the chart as the next release would ship it: version
// 0.2.0-next, a default changed (serviceMonitor.interval 45s), and a
// RelayPeer CRD with one more optional field, spec.nextRelease.
func nextChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "liqo-relay")
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "Chart.yaml")
	b, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "version:") {
			lines[i] = "version: 0.2.0-next"
		}
	}
	if err := os.WriteFile(chart, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "values.yaml")
	vb, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(vb), "  interval: 30s\n") {
		t.Fatal("values.yaml has no serviceMonitor interval of 30s to change")
	}
	if err := os.WriteFile(values, []byte(strings.Replace(string(vb), "  interval: 30s\n", "  interval: 45s\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	crdPath := filepath.Join(dir, "crds", "relay.liqo-relay.io_relaypeers.yaml")
	raw, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec, ok := get(crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties").(map[string]any)
	if !ok {
		t.Fatalf("%s: no spec properties", crdPath)
	}
	spec["nextRelease"] = map[string]any{"type": "string", "description": "A field of the next release."}
	out, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crdPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
