package manifests

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/build/manifestgen"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

var execCommand = exec.Command

// stubCRDs stand in for the CRDs of cert-manager (Certificate, Issuer) and
// the Prometheus Operator (ServiceMonitor), which the certmanager and
// netstack variants render: the API server then accepts those objects
// without checking their fields (those products' schemas are not here);
// every other object is checked by the real API server.
func stubCRDs() string {
	var docs []string
	for _, k := range []struct{ group, kind, plural string }{
		{"cert-manager.io", "Certificate", "certificates"},
		{"cert-manager.io", "Issuer", "issuers"},
		{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors"},
	} {
		docs = append(docs, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  names: {kind: %[2]s, plural: %[3]s}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`, k.group, k.kind, k.plural))
	}
	return strings.Join(docs, "---\n")
}

// namespacesOf returns the namespaces of a rendered chart's objects.
func namespacesOf(t *testing.T, what string, out []byte) []string {
	t.Helper()
	var nss []string
	for _, o := range decodeAll(t, what, out) {
		if ns, ok := get(o, "metadata", "namespace").(string); ok && !slices.Contains(nss, ns) {
			nss = append(nss, ns)
		}
	}
	return nss
}

// splitCRDs returns the CRDs and the other documents of a rendered chart,
// each as a multi-document YAML stream.
func splitCRDs(out []byte) (crds, rest string) {
	var c, r []string
	for _, doc := range strings.Split(string(out), "\n---\n") {
		if strings.Contains(doc, "\nkind: CustomResourceDefinition\n") {
			c = append(c, doc)
		} else {
			r = append(r, doc)
		}
	}
	return strings.Join(c, "\n---\n"), strings.Join(r, "\n---\n")
}

// TestChartAppliesToAPIServer renders every variant and every good values
// file and applies it to a real kube-apiserver: the CRDs first, then a
// server-side dry run of the rest, then the real server-side apply, then
// reads some objects back. The kustomize bases and the Liqo templates
// (with Liqo's CRDs) are applied too.
func TestChartAppliesToAPIServer(t *testing.T) {
	h := helm(t)
	c := k8stest.Start(t, "chart", "")
	c.KubectlIn(t, stubCRDs(), "apply", "--server-side", "-f", "-")
	for _, v := range append(append([]variant{}, variants...), goodVariants(t)...) {
		out := v.render(t, h)
		crds, rest := splitCRDs(out)
		c.KubectlIn(t, crds, "apply", "--server-side", "--force-conflicts", "-f", "-")
		c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
		// liqo: the webhook reads Liqo's clusterid ConfigMap there (a Role);
		// the others: the tenant namespaces of the grants and templates.
		for _, ns := range append([]string{v.name, "liqo-tenant-consumer-1", "liqo"}, namespacesOf(t, v.name, out)...) {
			if out, err := c.KubectlErr("create", "namespace", ns); err != nil && !strings.Contains(out, "AlreadyExists") {
				t.Fatalf("namespace %s: %v\n%s", ns, err, out)
			}
		}
		c.KubectlIn(t, rest, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-")
		c.KubectlIn(t, rest, "apply", "--server-side", "--force-conflicts", "-f", "-")
	}
	if got := c.Kubectl(t, "get", "mutatingwebhookconfiguration", "both-liqo-relay-inject", "-o", "jsonpath={.webhooks[0].failurePolicy}"); got != "Ignore" {
		t.Errorf("failurePolicy %q", got)
	}
	if got := c.Kubectl(t, "-n", "both", "get", "deployment", "both-liqo-relay-operator", "-o", "jsonpath={.spec.template.spec.containers[0].args[0]}"); got != "operator" {
		t.Errorf("operator args[0] %q", got)
	}

	// The kustomize bases, as kubectl -k applies them.
	c.Kubectl(t, "create", "namespace", "liqo-relay")
	for _, b := range []string{"consumer", "provider"} {
		dir := filepath.Join("kustomize", b)
		c.Kubectl(t, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-k", dir)
		c.Kubectl(t, "apply", "--server-side", "--force-conflicts", "-k", dir)
	}

	// The Liqo templates, with Liqo's CRDs.
	c.Kubectl(t, "apply", "--server-side", "-f", filepath.Join(fixtureDir, "..", "crds"))
	c.Kubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
	for _, lt := range manifestgen.LiqoTemplates {
		f := filepath.Join("liqo-template", lt.Out)
		c.Kubectl(t, "apply", "--server-side", "--dry-run=server", "-f", f)
		c.Kubectl(t, "apply", "--server-side", "-f", f)
	}
}
