package manifests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// notesProbe is a template added to a copy of the chart: NOTES.txt
// rendered into a ConfigMap, since helm template prints no notes and
// helm install needs a cluster even with --dry-run.
const notesProbe = `apiVersion: v1
kind: ConfigMap
metadata: {name: notes-probe}
data:
  notes: {{ include "liqo-relay/templates/NOTES.txt" . | toJson }}
`

// notesChart copies the chart with notesProbe into a temporary directory.
func notesChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "liqo-relay")
	err := filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chartDir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "templates", "zz-notes-probe.yaml"), []byte(notesProbe), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// notes renders NOTES.txt and the chart's objects for v.
func notes(t *testing.T, h, dir string, v variant) (string, []map[string]any) {
	t.Helper()
	out, err := v.template(h, dir)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, v.name, out)
	probe := find(objs, "ConfigMap", "notes-probe")
	text, _ := get(probe, "data", "notes").(string)
	if !strings.Contains(text, "liqo-relay") {
		t.Fatalf("%s: no notes rendered: %v", v.name, probe)
	}
	return text, objs
}

// heredoc returns the YAML of the first `kubectl apply -f - <<EOF` in the
// notes, unindented.
func heredoc(t *testing.T, text string) map[string]any {
	t.Helper()
	_, rest, ok := strings.Cut(text, "<<EOF\n")
	body, _, ok2 := strings.Cut(rest, "\n  EOF")
	if !ok || !ok2 {
		t.Fatalf("no heredoc in the notes:\n%s", text)
	}
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &obj); err != nil {
		t.Fatalf("the notes' example does not parse: %v\n%s", err, body)
	}
	return obj
}

// TestChartNotesConsumer: the consumer's notes show a ForeignClusterConnection
// that the CRD of manifests/crds admits (its group, served version, kind
// and scope; every required spec field and no other than the CRD's), the
// short name `kubectl get fcc` uses, and the operator's Deployment; not the
// provider's steps.
func TestChartNotesConsumer(t *testing.T) {
	h := helm(t)
	text, objs := notes(t, h, notesChart(t), variant{name: "consumer"})
	crd := decodeAll(t, "fcc crd", readFile(t, "crds/relay.liqo-relay.io_foreignclusterconnections.yaml"))[0]
	fcc := heredoc(t, text)
	var served []any
	for _, ver := range get(crd, "spec", "versions").([]any) {
		if get(ver, "served") == true {
			served = append(served, get(crd, "spec", "group").(string)+"/"+get(ver, "name").(string))
		}
	}
	if !slices.Contains(served, fcc["apiVersion"]) || fcc["kind"] != get(crd, "spec", "names", "kind") {
		t.Errorf("the example is %v %v; the CRD serves %v %v", fcc["apiVersion"], fcc["kind"], served, get(crd, "spec", "names", "kind"))
	}
	if get(crd, "spec", "scope") == "Cluster" && get(fcc, "metadata", "namespace") != nil {
		t.Errorf("the example has a namespace; the CRD is cluster-scoped")
	}
	specSchema := get(crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec")
	spec, _ := fcc["spec"].(map[string]any)
	for _, req := range get(specSchema, "required").([]any) {
		if spec[req.(string)] == nil {
			t.Errorf("the example has no spec.%s, which the CRD requires", req)
		}
	}
	for k := range spec {
		if get(specSchema, "properties", k) == nil {
			t.Errorf("the example's spec.%s is not a field of the CRD", k)
		}
	}
	name, _ := get(fcc, "metadata", "name").(string)
	for _, want := range []string{"kubectl get fcc", "kubectl describe fcc " + name} {
		if !strings.Contains(text, want) {
			t.Errorf("the notes do not say %q", want)
		}
	}
	if !contains(get(crd, "spec", "names", "shortNames"), "fcc") {
		t.Errorf("the CRD has no short name fcc: %v", get(crd, "spec", "names"))
	}
	checkDeploymentCommands(t, text, objs, "consumer")
	if strings.Contains(text, "PROVIDER") || strings.Contains(text, "mutatingwebhookconfiguration") {
		t.Errorf("the consumer's notes show the provider's steps:\n%s", text)
	}
}

// TestChartNotesProvider: the provider's notes name the webhook's
// Deployment and configuration as rendered, the relay's address, the
// consumers' tenant namespaces, the pods the webhook selects, and
// resources of the CRDs; not the consumer's steps.
func TestChartNotesProvider(t *testing.T) {
	h := helm(t)
	v := fileVariant(filepath.Join(valuesDir, "good", "provider.yaml"))
	text, objs := notes(t, h, notesChart(t), v)
	name := v.name + "-liqo-relay-inject"
	mwc := find(objs, "MutatingWebhookConfiguration", name)
	if mwc == nil || !strings.Contains(text, "kubectl get mutatingwebhookconfiguration "+name+"\n") {
		t.Errorf("the notes do not check the webhook configuration %s:\n%s", name, text)
	}
	label := "networking.liqo.io/component=" + get(mwc, "webhooks", 0, "objectSelector", "matchLabels", "networking.liqo.io/component").(string)
	for _, want := range []string{"100.80.0.2/32", "-n liqo-tenant-consumer-1 get pods -l " + label, "liqo-tenant-consumer-1 liqo-tenant-c2.",
		"get relays,relaypeers"} {
		if !strings.Contains(text, want) {
			t.Errorf("the notes do not say %q:\n%s", want, text)
		}
	}
	for _, crd := range []string{"relays", "relaypeers"} {
		o := decodeAll(t, crd, readFile(t, "crds/relay.liqo-relay.io_"+crd+".yaml"))[0]
		if get(o, "spec", "names", "plural") != crd {
			t.Errorf("no CRD with the plural %s", crd)
		}
	}
	checkDeploymentCommands(t, text, objs, v.name)
	if strings.Contains(text, "ForeignClusterConnection") {
		t.Errorf("the provider's notes show the consumer's steps:\n%s", text)
	}
}

// deploymentRef matches a Deployment the notes name, with its namespace.
var deploymentRef = regexp.MustCompile(`kubectl -n (\S+) (?:rollout status|logs) deployment/(\S+)`)

// checkDeploymentCommands: every Deployment the notes name is one the
// chart renders, in that namespace, and there is at least one.
func checkDeploymentCommands(t *testing.T, text string, objs []map[string]any, ns string) {
	t.Helper()
	refs := deploymentRef.FindAllStringSubmatch(text, -1)
	if len(refs) == 0 {
		t.Errorf("the notes name no Deployment:\n%s", text)
	}
	for _, m := range refs {
		if d := find(objs, "Deployment", m[2]); d == nil || m[1] != ns || get(d, "metadata", "namespace") != ns {
			t.Errorf("the notes name Deployment %s in %s, which the chart does not render", m[2], m[1])
		}
	}
}

// TestChartNotesRender: the notes render for every good values file, and
// each role's section appears exactly when the role is on.
func TestChartNotesRender(t *testing.T) {
	h := helm(t)
	dir := notesChart(t)
	for _, v := range goodVariants(t) {
		text, objs := notes(t, h, dir, v)
		k := kinds(objs)
		operator := find(objs, "Deployment", v.name+"-liqo-relay-operator") != nil
		if strings.Contains(text, "CONSUMER:") != operator || strings.Contains(text, "PROVIDER:") != (k["MutatingWebhookConfiguration"] == 1) {
			t.Errorf("%s: the notes' sections do not follow the roles installed (%v):\n%s", v.name, k, text)
		}
		if strings.Contains(text, "<no value>") || strings.Contains(text, "%!") {
			t.Errorf("%s: the notes print a missing value:\n%s", v.name, text)
		}
	}
}
