package manifests

import (
	"strings"
	"testing"

	"github.com/liqo-relay/relay/pkg/kube/inject"
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
// error), so values.yaml cannot drift from inject.Sidecar.
func TestChartSidecarParses(t *testing.T) {
	h := helm(t)
	extra := []variant{
		{name: "sidecar-options", sets: []string{
			"sidecar.mode=netstack", "sidecar.service.type=ClusterIP", "sidecar.localClusterID=provider-a",
			"sidecar.nameIncludesConsumer=true", "sidecar.allowedPeerPrefixes={10.70.0.0/16}", "sidecar.exports={10.244.0.0/16}",
			"sidecar.health.interval=100ms", "sidecar.log.format=json", "sidecar.keySecret=other-key", "networkPolicy.enabled=false",
		}},
	}
	n := 0
	for _, v := range append(append([]variant{}, variants...), extra...) {
		file := sidecarFile(decodeAll(t, v.name, v.render(t, h)))
		if file == "" {
			continue
		}
		n++
		sc, err := inject.ParseSidecar([]byte(file))
		if err != nil {
			t.Errorf("%s: the chart's sidecar file does not parse with inject.ParseSidecar:\n%v\n%s", v.name, err, file)
			continue
		}
		if sc.Image != "ghcr.io/liqo-relay/relay:0.1.0" {
			t.Errorf("%s: image %q", v.name, sc.Image)
		}
		if v.name == "sidecar-options" {
			if sc.Mode != inject.ModeNetstack || sc.Service.Type != "ClusterIP" || sc.Service.ExternalTrafficPolicy != "" ||
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
		v := variant{name: "np", sets: c.sets}
		file := sidecarFile(decodeAll(t, "np", v.render(t, h)))
		sc, err := inject.ParseSidecar([]byte(file))
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
