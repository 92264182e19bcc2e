package k8stest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// LiqoGatewayPod is the pod of the gateway named gateway in namespace ns
// as Liqo v1.2.0's Deployment makes it from its default WireGuard server
// template (test/fixtures/liqo-v1.2.0/examples/wireguard-server-default.yaml),
// the consumer's cluster ID being the gateway's name. Name, labels set by
// Liqo's controllers at run time (gateway-name, active) and the pod's
// namespace are the caller's.
func LiqoGatewayPod(t testing.TB, gateway, ns string) *corev1.Pod {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "test", "fixtures", "liqo-v1.2.0", "examples", "wireguard-server-default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer("{{ .Name }}", gateway, "{{ .Namespace }}", ns, "{{ .ClusterID }}", gateway,
		"{{ .GatewayUID }}", "5b0c8c3e-0d4f-4a55-9a55-6f0c8d6b1a01", "{{ .Spec.MTU }}", "1340",
		"{{ .Spec.Endpoint.Port }}", "51840", "<VERSION>", "v1.2.0")
	var tmpl struct {
		Spec struct {
			Template struct {
				Spec struct {
					Deployment struct {
						Spec struct {
							Template corev1.PodTemplateSpec `json:"template"`
						} `json:"spec"`
					} `json:"deployment"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(r.Replace(string(raw))), &tmpl); err != nil {
		t.Fatal(err)
	}
	pt := tmpl.Spec.Template.Spec.Deployment.Spec.Template
	return &corev1.Pod{ObjectMeta: pt.ObjectMeta, Spec: pt.Spec}
}

// InstallLiqoClusterID creates Liqo's namespace liqo with the cluster-ID
// ConfigMap Liqo keeps there (label app.kubernetes.io/name=clusterid-configmap,
// data CLUSTER_ID), as relay inject and relay operator read it.
func (c *Cluster) InstallLiqoClusterID(t testing.TB, id string) {
	t.Helper()
	c.KubectlIn(t, `
apiVersion: v1
kind: Namespace
metadata: {name: liqo}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: liqo-clusterid-configmap, namespace: liqo, labels: {app.kubernetes.io/name: clusterid-configmap}}
data: {CLUSTER_ID: `+id+`}
`, "apply", "-f", "-")
}

// Eventually retries check until it returns "" or a minute passes, then
// fails t with check's last message. The minute is a deadline for a busy
// machine, not a timing assertion: API servers and controllers converge
// asynchronously.
func Eventually(t testing.TB, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s", what, msg)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
