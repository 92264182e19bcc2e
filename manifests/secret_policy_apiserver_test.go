package manifests

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// tokenSecret is a Secret that Kubernetes' token controller fills with a
// token of ServiceAccount sa (in the Secret's namespace): what a holder of
// `create secrets` plus `get secrets/<name>` could use to take sa's rights.
func tokenSecret(ns, name, sa string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{corev1.ServiceAccountNameKey: sa}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
}

func opaqueSecret(ns, name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"k": []byte("v")}}
}

// refusedByPolicy returns "" when err is the refusal of one of the
// ValidatingAdmissionPolicies policies, else what happened.
func refusedByPolicy(err error, policies ...string) string {
	if err == nil {
		return "admitted"
	}
	for _, p := range policies {
		if strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+p+"'") {
			return ""
		}
	}
	return "not refused by " + strings.Join(policies, " or ") + ": " + err.Error()
}

// waitForSecretPolicies waits until the API server enforces the chart's
// ValidatingAdmissionPolicies of release rel (they take effect a moment
// after they are created), probing with server-side dry runs.
func waitForSecretPolicies(t *testing.T, admin, webhook kubernetes.Interface, rel, ns string) {
	t.Helper()
	ctx := context.Background()
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	k8stest.Eventually(t, "the key Secret policy in force", func() string {
		_, err := admin.CoreV1().Secrets(ns).Create(ctx, tokenSecret(ns, "relay-key", "default"), dry)
		return refusedByPolicy(err, rel+"-liqo-relay-key-secret")
	})
	k8stest.Eventually(t, "the webhook's write policy in force", func() string {
		_, err := webhook.CoreV1().Secrets(ns).Create(ctx, opaqueSecret(ns, "not-the-key"), dry)
		return refusedByPolicy(err, rel+"-liqo-relay-inject-writes")
	})
}

func kubeconfigClient(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// checkSecretPolicies checks, on the API server of
// TestChartWebhookWithRealAPIServer, what the chart's
// ValidatingAdmissionPolicies refuse that the webhook's RBAC allows
// (manifests/README.md, "Security"): the webhook's ServiceAccount cannot
// create a ServiceAccount-token Secret under the key Secret's name (whose
// token it could then read) nor any other Secret, RoleBinding or
// NetworkPolicy outside its own, and nobody, admin included, can create a
// key Secret that is not Opaque. The webhook can still create an Opaque
// key Secret.
func checkSecretPolicies(t *testing.T, admin, webhook kubernetes.Interface, rel, tenant string) {
	t.Helper()
	ctx := context.Background()
	keyPolicy, writePolicy := rel+"-liqo-relay-key-secret", rel+"-liqo-relay-inject-writes"
	for _, c := range []struct {
		what     string
		policies []string
		err      error
	}{
		// Both policies refuse it; the API server reports the first it
		// evaluates, in no fixed order.
		{what: "the webhook creating kube-system/relay-key, a token Secret of kube-system's default ServiceAccount", policies: []string{keyPolicy, writePolicy},
			err: func() error {
				_, err := webhook.CoreV1().Secrets("kube-system").Create(ctx, tokenSecret("kube-system", "relay-key", "default"), metav1.CreateOptions{})
				return err
			}()},
		{what: "the webhook creating an Opaque Secret kube-system/other", policies: []string{writePolicy},
			err: func() error {
				_, err := webhook.CoreV1().Secrets("kube-system").Create(ctx, opaqueSecret("kube-system", "other"), metav1.CreateOptions{})
				return err
			}()},
		{what: "the admin creating default/relay-key, a token Secret", policies: []string{keyPolicy},
			err: func() error {
				_, err := admin.CoreV1().Secrets("default").Create(ctx, tokenSecret("default", "relay-key", "default"), metav1.CreateOptions{})
				return err
			}()},
		{what: "the webhook binding its own ClusterRole in the tenant namespace", policies: []string{writePolicy},
			err: func() error {
				rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "liqo-relay-x", Namespace: tenant},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rel + "-liqo-relay-inject"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: tenant}}}
				_, err := webhook.RbacV1().RoleBindings(tenant).Create(ctx, rb, metav1.CreateOptions{})
				return err
			}()},
		{what: "the webhook binding its own ClusterRole cluster-wide under a liqo-relay-* name", policies: []string{writePolicy},
			err: func() error {
				crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "liqo-relay-dns-x"},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: rel + "-liqo-relay-inject"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: tenant}}}
				_, err := webhook.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
				return err
			}()},
		{what: "the webhook deleting a RoleBinding not its own", policies: []string{writePolicy},
			err: func() error {
				rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: tenant},
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
					Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}
				if _, err := admin.RbacV1().RoleBindings(tenant).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				return webhook.RbacV1().RoleBindings(tenant).Delete(ctx, rb.Name, metav1.DeleteOptions{})
			}()},
		// Its own Service lives in the release namespace (named
		// liqo-relay-inject for a release called liqo-relay): turned into
		// an ExternalName it would send every gateway pod to an attacker.
		{what: "the webhook creating a liqo-relay-* Service in the release's namespace", policies: []string{writePolicy},
			err: func() error {
				_, err := webhook.CoreV1().Services(rel).Create(ctx, clusterIPService(rel, "liqo-relay-inject"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}()},
		{what: "the webhook creating an ExternalName Service liqo-relay-x in the tenant namespace", policies: []string{writePolicy},
			err: func() error {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "liqo-relay-x", Namespace: tenant},
					Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "attacker.example.com"}}
				_, err := webhook.CoreV1().Services(tenant).Create(ctx, svc, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}()},
	} {
		if msg := refusedByPolicy(c.err, c.policies...); msg != "" {
			t.Errorf("%s: %s", c.what, msg)
		}
	}
	// The webhook's own kinds of write pass: a ClusterIP liqo-relay-*
	// Service in a tenant namespace, an Opaque key Secret.
	if _, err := webhook.CoreV1().Services(tenant).Create(ctx, clusterIPService(tenant, "liqo-relay-x"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("the webhook creating a ClusterIP Service liqo-relay-x in %s: %v", tenant, err)
	}
	// The webhook's own kind of write passes: an Opaque key Secret.
	if _, err := webhook.CoreV1().Secrets("default").Create(ctx, opaqueSecret("default", "relay-key"), metav1.CreateOptions{}); err != nil {
		t.Errorf("the webhook creating an Opaque default/relay-key: %v", err)
	}
}

func clusterIPService(ns, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "x", Port: 53}}}}
}
