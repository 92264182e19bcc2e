package manifests

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// TestWebhookConfigPolicyCoversEveryField: the policy on the webhook's own
// MutatingWebhookConfiguration names the fields a webhook must keep one
// by one (CEL has no "equal except caBundle"). A field that a Kubernetes
// release adds to MutatingWebhook, or to its clientConfig, and the policy
// does not name would be writable by the webhook: this fails then.
func TestWebhookConfigPolicyCoversEveryField(t *testing.T) {
	b, err := os.ReadFile("chart/liqo-relay/templates/inject-webhook-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policy := string(b)
	check := func(typ reflect.Type, ref string, skip ...string) {
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if name == "" || name == "-" || slices.Contains(skip, name) {
				continue
			}
			if !strings.Contains(policy, ref+".?"+name) && !strings.Contains(policy, ref+"."+name+" ") {
				t.Errorf("%s field %q is not compared by the policy (want %s.?%s == ...)", typ.Name(), name, ref, name)
			}
		}
	}
	// clientConfig is compared field by field below; caBundle is what may change.
	check(reflect.TypeFor[admissionv1.MutatingWebhook](), "w", "clientConfig")
	check(reflect.TypeFor[admissionv1.WebhookClientConfig](), "w.clientConfig", "caBundle")
}
