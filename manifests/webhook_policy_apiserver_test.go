package manifests

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// webhookConfigPolicy is the name of the chart's policy on the webhook's
// own MutatingWebhookConfiguration for release rel.
func webhookConfigPolicy(rel string) string { return rel + "-liqo-relay-inject-config" }

// widenRules is a change a compromised webhook would make: mutate every
// pod, on create and update.
func widenRules(w *admissionv1.MutatingWebhook) {
	w.Rules[0].Operations = append(w.Rules[0].Operations, admissionv1.Update)
}

// updateWebhookConfig has the client fetch the configuration name, change
// it with edit, and update it (dry run if dry).
func updateWebhookConfig(client kubernetes.Interface, name string, dry bool, edit func(*admissionv1.MutatingWebhookConfiguration)) error {
	ctx := context.Background()
	api := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	mwc, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	edit(mwc)
	opts := metav1.UpdateOptions{}
	if dry {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = api.Update(ctx, mwc, opts)
	return err
}

// waitForWebhookConfigPolicy waits until the API server enforces the
// policy (probing with a server-side dry run of a widened rule).
func waitForWebhookConfigPolicy(t *testing.T, webhook kubernetes.Interface, rel, name string) {
	t.Helper()
	k8stest.Eventually(t, "the webhook configuration policy in force", func() string {
		err := updateWebhookConfig(webhook, name, true, func(m *admissionv1.MutatingWebhookConfiguration) { widenRules(&m.Webhooks[0]) })
		return refusedByPolicy(err, webhookConfigPolicy(rel))
	})
}

// checkWebhookConfigPolicy checks, on the API server of
// TestChartWebhookWithRealAPIServer, that the webhook's ServiceAccount,
// which RBAC lets update its own MutatingWebhookConfiguration (for the
// caBundle), can change nothing else of it (manifests/README.md,
// "Security"), while its caBundle write passes (relay inject wrote it
// under the policy before this runs; here once more, by hand) and an
// admin's change is not the policy's business.
func checkWebhookConfigPolicy(t *testing.T, admin, webhook kubernetes.Interface, rel, name string) {
	t.Helper()
	str := func(v string) *string { return &v }
	for _, c := range []struct {
		what string
		edit func(*admissionv1.MutatingWebhookConfiguration)
	}{
		{"widening its rules to pod updates", func(m *admissionv1.MutatingWebhookConfiguration) { widenRules(&m.Webhooks[0]) }},
		{"dropping its namespaceSelector", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{}
		}},
		{"dropping its objectSelector", func(m *admissionv1.MutatingWebhookConfiguration) { m.Webhooks[0].ObjectSelector = nil }},
		{"adding a match condition", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].MatchConditions = append(m.Webhooks[0].MatchConditions, admissionv1.MatchCondition{Name: "all", Expression: "true"})
		}},
		{"making its failures fatal", func(m *admissionv1.MutatingWebhookConfiguration) {
			f := admissionv1.Fail
			m.Webhooks[0].FailurePolicy = &f
		}},
		{"changing its match policy", func(m *admissionv1.MutatingWebhookConfiguration) {
			p := admissionv1.Exact
			if m.Webhooks[0].MatchPolicy != nil && *m.Webhooks[0].MatchPolicy == p {
				p = admissionv1.Equivalent
			}
			m.Webhooks[0].MatchPolicy = &p
		}},
		{"asking to be reinvoked", func(m *admissionv1.MutatingWebhookConfiguration) {
			r := admissionv1.IfNeededReinvocationPolicy
			m.Webhooks[0].ReinvocationPolicy = &r
		}},
		{"changing its side effects", func(m *admissionv1.MutatingWebhookConfiguration) {
			se := admissionv1.SideEffectClassNoneOnDryRun
			m.Webhooks[0].SideEffects = &se
		}},
		{"changing its timeout", func(m *admissionv1.MutatingWebhookConfiguration) {
			to := int32(29)
			m.Webhooks[0].TimeoutSeconds = &to
		}},
		{"changing its review versions", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].AdmissionReviewVersions = []string{"v1", "v1beta1"}
		}},
		{"pointing it at another URL", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].ClientConfig.URL = str("https://attacker.example/mutate")
		}},
		{"pointing it at a Service", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].ClientConfig.URL = nil
			m.Webhooks[0].ClientConfig.Service = &admissionv1.ServiceReference{Namespace: "kube-system", Name: "attacker", Path: str("/mutate")}
		}},
		{"adding a second webhook", func(m *admissionv1.MutatingWebhookConfiguration) {
			w := *m.Webhooks[0].DeepCopy()
			w.Name = "everything.example.com"
			m.Webhooks = append(m.Webhooks, w)
		}},
		{"relabelling it", func(m *admissionv1.MutatingWebhookConfiguration) { m.Labels["x"] = "y" }},
		{"annotating it", func(m *admissionv1.MutatingWebhookConfiguration) {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations["x"] = "y"
		}},
		{"adding a finalizer (blocks its removal)", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.Finalizers = append(m.Finalizers, "example.com/hold")
		}},
		{"giving it a missing owner (the garbage collector would delete it)", func(m *admissionv1.MutatingWebhookConfiguration) {
			m.OwnerReferences = append(m.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "gone", UID: "00000000-0000-0000-0000-000000000000"})
		}},
	} {
		// Dry runs: a regression admits nothing for real, so every case
		// starts from the configuration as it is.
		if msg := refusedByPolicy(updateWebhookConfig(webhook, name, true, c.edit), webhookConfigPolicy(rel)); msg != "" {
			t.Errorf("the webhook %s: %s", c.what, msg)
		}
	}
	// The caBundle alone passes.
	if err := updateWebhookConfig(webhook, name, true, func(m *admissionv1.MutatingWebhookConfiguration) {
		m.Webhooks[0].ClientConfig.CABundle = append(append([]byte(nil), m.Webhooks[0].ClientConfig.CABundle...), '\n')
	}); err != nil {
		t.Errorf("the webhook changing only its caBundle: %v", err)
	}
	// The admin is not held to it.
	if err := updateWebhookConfig(admin, name, true, func(m *admissionv1.MutatingWebhookConfiguration) { widenRules(&m.Webhooks[0]) }); err != nil {
		t.Errorf("the admin widening the rules: %v", err)
	}
}
