package manifests

import (
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/build/manifestgen"
)

// TestChartKubeVersionFloor: Chart.yaml's kubeVersion is >= the version
// the chart is rendered for (manifestgen.KubeVersion), which holds the
// ValidatingAdmissionPolicies' admissionregistration.k8s.io/v1: helm
// refuses the Kubernetes release before it, vendor builds of the floor
// (pre-release versions to SemVer) pass.
func TestChartKubeVersionFloor(t *testing.T) {
	h := helm(t)
	var chart struct {
		KubeVersion string `yaml:"kubeVersion"`
	}
	if err := yaml.Unmarshal(readFile(t, filepath.Join(chartDir, "Chart.yaml")), &chart); err != nil {
		t.Fatal(err)
	}
	if want := ">=" + strings.TrimPrefix(manifestgen.KubeVersion, "v") + "-0"; chart.KubeVersion != want {
		t.Errorf("Chart.yaml kubeVersion %q, want %q (manifestgen.KubeVersion)", chart.KubeVersion, want)
	}
	render := func(kube string) error {
		_, err := runHelm(h, "template", "floor", chartDir, "--kube-version", kube)
		return err
	}
	if err := render("v1.29.15"); err == nil || !strings.Contains(err.Error(), "kubeVersion") {
		t.Errorf("Kubernetes 1.29: %v, want the chart refused for its kubeVersion", err)
	}
	for _, ok := range []string{manifestgen.KubeVersion, "v1.30.4-eks-1552ad0", "v1.37.2"} {
		if err := render(ok); err != nil {
			t.Errorf("Kubernetes %s: %v", ok, err)
		}
	}
	policies := strings.Join([]string{string(readFile(t, filepath.Join(chartDir, "templates", "secret-policy.yaml"))),
		string(readFile(t, filepath.Join(chartDir, "templates", "inject-webhook-policy.yaml")))}, "\n")
	if strings.Count(policies, "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy") == 0 {
		t.Errorf("no ValidatingAdmissionPolicy of admissionregistration.k8s.io/v1: the floor of 1.30 may be too high")
	}
}
