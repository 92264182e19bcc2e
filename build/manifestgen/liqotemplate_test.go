package manifestgen

import (
	"strings"
	"testing"
)

// TestAddRelayRefusesWhatIsNotAGatewayTemplate: input without the
// template's pod spec, or that already has a relay container, gets an
// error that names the example and the field.
func TestAddRelayRefusesWhatIsNotAGatewayTemplate(t *testing.T) {
	lt := LiqoTemplates[0]
	for _, c := range []struct{ in, want string }{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "spec is not a mapping"},
		{"metadata: {name: x}\nspec: {template: {spec: {deployment: {spec: {template: {}}}}}}\n", "spec.template.spec.deployment.spec.template.spec is not a mapping"},
		{"metadata: {name: x}\nspec: {template: {spec: {deployment: {spec: {template: {spec: {containers: [{name: relay, image: x}]}}}}}}}\n", `containers[0] is already named "relay"`},
		{"kind: [\n", lt.Fixture},
	} {
		_, err := AddRelay([]byte(c.in), lt)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), lt.Fixture) {
			t.Errorf("AddRelay(%q): %v, want an error naming %s and %q", c.in, err, lt.Fixture, c.want)
		}
	}
}
