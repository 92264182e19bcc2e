package manifests

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/kube/consumer/operator"
	"github.com/liqo-relay/relay/internal/kube/webhook"
)

// sidecarFile returns the sidecar.yaml of the webhook's ConfigMap in a
// rendered chart, or "" when the chart has no webhook.
func sidecarFile(objs []map[string]any) string {
	for _, o := range objs {
		if o["kind"] == "ConfigMap" {
			if s, ok := get(o, "data", "sidecar.yaml").(string); ok {
				return s
			}
		}
	}
	return ""
}

// TestChartSidecarParses feeds the sidecar file of every variant that has
// the webhook to the webhook's own parser (strict: an unknown key is an
// error), so values.yaml cannot drift from webhook.Sidecar.
func TestChartSidecarParses(t *testing.T) {
	h := helm(t)
	extra := []variant{
		{name: "sidecar-options", sets: withInject(
			"sidecar.mode=netstack", "sidecar.service.type=ClusterIP", "sidecar.localClusterID=provider-a",
			"sidecar.nameIncludesConsumer=true", "sidecar.allowedPeerPrefixes={10.70.0.0/16}", "sidecar.exports={10.244.0.0/16}",
			"sidecar.health.interval=100ms", "sidecar.log.format=json", "sidecar.keySecret=other-key", "networkPolicy.enabled=false",
		)},
	}
	n := 0
	for _, v := range append(append([]variant{}, variants...), extra...) {
		file := sidecarFile(decodeAll(t, v.name, v.render(t, h)))
		if file == "" {
			continue
		}
		n++
		sc, err := webhook.ParseSidecar([]byte(file))
		if err != nil {
			t.Errorf("%s: the chart's sidecar file does not parse with webhook.ParseSidecar:\n%v\n%s", v.name, err, file)
			continue
		}
		if sc.Image != "ghcr.io/liqo-relay/relay:0.1.0" {
			t.Errorf("%s: image %q", v.name, sc.Image)
		}
		if v.name == "sidecar-options" {
			if sc.Mode != webhook.ModeNetstack || sc.Service.Type != "ClusterIP" || sc.Service.ExternalTrafficPolicy != "" ||
				sc.KeySecret != "other-key" || !sc.NameIncludesConsumer || sc.NetworkPolicyEnabled() {
				t.Errorf("%s: %+v", v.name, sc)
			}
		}
	}
	if n < 4 {
		t.Errorf("only %d variants render the webhook", n)
	}
}

// TestChartSidecarNetworkPolicyDefaults: the gateway pods' NetworkPolicy
// (written by the webhook's controller) follows the chart's networkPolicy
// switch and peers unless sidecar.networkPolicy says otherwise.
func TestChartSidecarNetworkPolicyDefaults(t *testing.T) {
	h := helm(t)
	for _, c := range []struct {
		sets []string
		want bool
		from string
	}{
		{nil, true, "namespaceSelector"},
		{[]string{"networkPolicy.enabled=false"}, false, "namespaceSelector"},
		{[]string{"networkPolicy.enabled=false", "sidecar.networkPolicy.enabled=true"}, true, "namespaceSelector"},
		{[]string{"sidecar.networkPolicy.metricsFrom[0].ipBlock.cidr=10.0.0.0/8"}, true, "10.0.0.0/8"},
	} {
		v := variant{name: "np", sets: withInject(c.sets...)}
		file := sidecarFile(decodeAll(t, "np", v.render(t, h)))
		sc, err := webhook.ParseSidecar([]byte(file))
		if err != nil {
			t.Fatalf("%v: %v", c.sets, err)
		}
		if sc.NetworkPolicyEnabled() != c.want || len(sc.NetworkPolicy.MetricsFrom) != 1 {
			t.Errorf("%v: networkPolicy %+v", c.sets, sc.NetworkPolicy)
		}
		if !strings.Contains(file, c.from) {
			t.Errorf("%v: metricsFrom is not %s:\n%s", c.sets, c.from, file)
		}
	}
}

// TestChartRBACFilesAreTheRBACFiles: the chart's files/rbac, which its
// templates take the rules from, are manifests/rbac byte for byte.
func TestChartRBACFilesAreTheRBACFiles(t *testing.T) {
	sameFiles(t, "rbac", filepath.Join(chartDir, "files", "rbac"))
}

// rbacObject returns the object of kind in an RBAC file of manifests/rbac.
func rbacObject(t *testing.T, file, kind string) map[string]any {
	t.Helper()
	for _, o := range decodeAll(t, file, readFile(t, filepath.Join("rbac", file))) {
		if o["kind"] == kind {
			return o
		}
	}
	t.Fatalf("%s has no %s", file, kind)
	return nil
}

// withNames returns rules with the resourceNames of the named resources
// replaced, as the chart does.
func withNames(rules any, names map[string]any) any {
	var out []any
	for _, r := range rules.([]any) {
		m := map[string]any{}
		for k, v := range r.(map[string]any) {
			m[k] = v
		}
		if m["resourceNames"] != nil {
			for _, res := range m["resources"].([]any) {
				if n, ok := names[res.(string)]; ok {
					if l, ok := n.([]any); ok {
						m["resourceNames"] = l
					} else {
						m["resourceNames"] = []any{n}
					}
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// TestChartRBACIsTheComponentsRBAC: every Role and ClusterRole of the chart
// for the operator, the webhook, the relay and the consumer's grant in
// the providers has exactly the rules of its manifests/rbac file (which the
// components' real-API-server tests run under), with the names the chart's
// values give.
func TestChartRBACIsTheComponentsRBAC(t *testing.T) {
	h := helm(t)
	for _, v := range []variant{
		{name: "both", sets: bothRoles},
		{name: "names", sets: withBoth("sidecar.keySecret=k", "sidecar.relayClusterRole=r", "sidecar.liqoNamespace=lq")},
	} {
		objs := decodeAll(t, v.name, v.render(t, h))
		names := map[string]any{"secrets": "relay-key", "clusterroles": []any{"liqo-relay", "liqo-relay-dns"}, "mutatingwebhookconfigurations": v.name + "-liqo-relay-inject"}
		relayRole, liqoNS := "liqo-relay", "liqo"
		if v.name == "names" {
			names["secrets"], names["clusterroles"], relayRole, liqoNS = "k", []any{"r", "liqo-relay-dns"}, "r", "lq"
		}
		for _, c := range []struct {
			kind, name, ns, file, fileKind string
			names                          map[string]any
		}{
			{"ClusterRole", v.name + "-liqo-relay-operator", "", "operator-role.yaml", "ClusterRole", nil},
			{"Role", v.name + "-liqo-relay-operator", v.name, "operator-role.yaml", "Role", nil},
			{"ClusterRole", v.name + "-liqo-relay-consumer-operator", "", "operator-provider-role.yaml", "Role", nil},
			{"ClusterRole", v.name + "-liqo-relay-inject", "", "inject-role.yaml", "ClusterRole", names},
			{"Role", v.name + "-liqo-relay-inject", liqoNS, "inject-role.yaml", "Role", nil},
			{"ClusterRole", relayRole, "", "relay-role.yaml", "Role", map[string]any{"secrets": names["secrets"]}},
		} {
			got := find(objs, c.kind, c.name)
			if got == nil || get(got, "metadata", "namespace") != nilIfEmpty(c.ns) {
				t.Errorf("%s: no %s %s in namespace %q", v.name, c.kind, c.name, c.ns)
				continue
			}
			want := withNames(rbacObject(t, c.file, c.fileKind)["rules"], c.names)
			if !reflect.DeepEqual(got["rules"], want) {
				t.Errorf("%s: %s %s rules\n%v\ndiffer from rbac/%s's %s\n%v", v.name, c.kind, c.name, got["rules"], c.file, c.fileKind, want)
			}
		}
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// deploymentArgs returns the arguments of a Deployment's first container.
func deploymentArgs(t *testing.T, objs []map[string]any, name string) []string {
	t.Helper()
	args, _ := get(find(objs, "Deployment", name), "spec", "template", "spec", "containers", 0, "args").([]any)
	if len(args) == 0 {
		t.Fatalf("Deployment %s has no args", name)
	}
	var out []string
	for _, a := range args {
		out = append(out, fmt.Sprint(a))
	}
	return out
}

// TestChartFlagsParse parses the chart's arguments of relay operator and
// relay inject with the commands' own flag sets (an unknown or renamed
// flag fails) and checks them against the chart's other objects: the
// webhook's Service, its configuration's name (whose caBundle it
// writes), its ports, and the operator's Lease and namespace.
func TestChartFlagsParse(t *testing.T) {
	h := helm(t)
	for _, v := range variants {
		objs := decodeAll(t, v.name, v.render(t, h))
		if d := find(objs, "Deployment", v.name+"-liqo-relay-operator"); d != nil {
			args := deploymentArgs(t, objs, v.name+"-liqo-relay-operator")
			fs, cl := operator.NewFlagSet()
			fs.SetOutput(io.Discard)
			if args[0] != "operator" {
				t.Errorf("%s: operator args[0] %q", v.name, args[0])
			} else if err := fs.Parse(args[1:]); err != nil {
				t.Errorf("%s: relay operator %v: %v", v.name, args[1:], err)
			} else if err := cl.Check(fs); err != nil {
				t.Errorf("%s: relay operator %v: %v", v.name, args[1:], err)
			} else {
				o := cl.Options
				role := find(objs, "Role", v.name+"-liqo-relay-operator")
				if o.Namespace != v.name || !o.LeaderElect || o.LeaseName == "" || get(role, "metadata", "namespace") != o.Namespace {
					t.Errorf("%s: operator options %+v; its Role %v", v.name, o, get(role, "metadata"))
				}
				checkPorts(t, v.name+" operator", d, map[string]string{"metrics": o.MetricsListen, "health": o.HealthListen})
			}
		}
		name := v.name + "-liqo-relay-inject"
		d := find(objs, "Deployment", name)
		if d == nil {
			continue
		}
		args := deploymentArgs(t, objs, name)
		fs, cl := webhook.NewFlagSet(func(string) string { return "" })
		fs.SetOutput(io.Discard)
		if args[0] != "inject" {
			t.Errorf("%s: inject args[0] %q", v.name, args[0])
			continue
		}
		if err := fs.Parse(args[1:]); err != nil {
			t.Errorf("%s: relay inject %v: %v", v.name, args[1:], err)
			continue
		}
		if err := cl.Check(fs); err != nil {
			t.Errorf("%s: relay inject %v: %v", v.name, args[1:], err)
			continue
		}
		o := cl.Options
		mwc := find(objs, "MutatingWebhookConfiguration", o.WebhookConfig)
		svc := find(objs, "Service", o.Service)
		if o.Namespace != v.name || get(svc, "metadata", "namespace") != o.Namespace || mwc == nil {
			t.Errorf("%s: inject --namespace %s --service %s --webhook-config %s: Service %v, webhook configuration %v",
				v.name, o.Namespace, o.Service, o.WebhookConfig, get(svc, "metadata"), get(mwc, "metadata", "name"))
			continue
		}
		if get(mwc, "webhooks", 0, "clientConfig", "service", "name") != o.Service || get(mwc, "webhooks", 0, "clientConfig", "service", "namespace") != o.Namespace {
			t.Errorf("%s: the webhook configuration calls %v", v.name, get(mwc, "webhooks", 0, "clientConfig"))
		}
		if get(svc, "spec", "ports", 0, "port") != get(mwc, "webhooks", 0, "clientConfig", "service", "port") || get(svc, "spec", "ports", 0, "targetPort") != "webhook" {
			t.Errorf("%s: the webhook Service's port %v", v.name, get(svc, "spec", "ports"))
		}
		checkPorts(t, v.name+" inject", d, map[string]string{"webhook": o.Listen, "metrics": o.MetricsListen, "health": o.HealthListen})
		pod := get(d, "spec", "template", "spec")
		if !mountsFile(pod, o.SidecarFile) || !mountsFile(pod, o.CertDir+"/tls.crt") {
			t.Errorf("%s: --sidecar %s or --cert-dir %s is not mounted", v.name, o.SidecarFile, o.CertDir)
		}
		if o.CertManager != (find(objs, "Certificate", name) != nil) {
			t.Errorf("%s: --cert-manager %v", v.name, o.CertManager)
		}
	}
}

// checkPorts checks that each named container port is the port of the
// address the flag gives.
func checkPorts(t *testing.T, what string, d map[string]any, addrs map[string]string) {
	t.Helper()
	ports := map[string]string{}
	for _, p := range get(d, "spec", "template", "spec", "containers", 0, "ports").([]any) {
		ports[fmt.Sprint(get(p, "name"))] = fmt.Sprint(get(p, "containerPort"))
	}
	for name, addr := range addrs {
		_, port, err := net.SplitHostPort(addr)
		if err != nil || ports[name] != port {
			t.Errorf("%s: container port %s is %s, the flag's address %s", what, name, ports[name], addr)
		}
	}
}

// mountsFile reports whether path lies under a volume mount of the pod's
// first container.
func mountsFile(pod any, path string) bool {
	for _, m := range get(pod, "containers", 0, "volumeMounts").([]any) {
		if mp, _ := get(m, "mountPath").(string); strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/") {
			return true
		}
	}
	return false
}

// TestChartWebhookIsTheTestedOne: the chart's MutatingWebhookConfiguration
// is internal/kube/webhook/testdata/webhook-config.yaml, the one the webhook
// is tested with on a real API server, but for the names the release gives
// (metadata, clientConfig.service) and one more namespaceSelector
// expression (the release namespace and kube-system are never mutated);
// its path is the webhook's.
func TestChartWebhookIsTheTestedOne(t *testing.T) {
	h := helm(t)
	for _, v := range variants {
		want := decodeAll(t, "webhook-config.yaml", readFile(t, "../internal/kube/webhook/testdata/webhook-config.yaml"))[0]
		mwc := find(decodeAll(t, v.name, v.render(t, h)), "MutatingWebhookConfiguration", v.name+"-liqo-relay-inject")
		if mwc == nil {
			continue
		}
		got := get(mwc, "webhooks").([]any)
		tested := get(want, "webhooks").([]any)
		if len(got) != len(tested) {
			t.Fatalf("%s: %d webhooks, tested %d", v.name, len(got), len(tested))
		}
		for i := range got {
			g, w := got[i].(map[string]any), tested[i].(map[string]any)
			if p := get(g, "clientConfig", "service", "path"); p != webhook.WebhookPath || p != get(w, "clientConfig", "service", "path") {
				t.Errorf("%s: path %v, the webhook serves %s", v.name, p, webhook.WebhookPath)
			}
			exprs := get(g, "namespaceSelector", "matchExpressions").([]any)
			if len(exprs) != 2 || !reflect.DeepEqual(exprs[0], get(w, "namespaceSelector", "matchExpressions", 0)) ||
				get(exprs[1], "key") != "kubernetes.io/metadata.name" || !contains(get(exprs[1], "values"), v.name) || !contains(get(exprs[1], "values"), "kube-system") {
				t.Errorf("%s: namespaceSelector %v", v.name, get(g, "namespaceSelector"))
			}
			if get(exprs[0], "key") != webhook.OptOutKey {
				t.Errorf("%s: the opt-out label is %v, the webhook's %s", v.name, get(exprs[0], "key"), webhook.OptOutKey)
			}
			if get(g, "objectSelector", "matchLabels", webhook.ComponentLabel) != webhook.ComponentGateway {
				t.Errorf("%s: objectSelector %v", v.name, get(g, "objectSelector"))
			}
			for _, m := range []map[string]any{g, w} {
				delete(m, "clientConfig")
				delete(m, "namespaceSelector")
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s: the chart's webhook\n%v\nis not the tested one\n%v", v.name, g, w)
			}
		}
	}
}
