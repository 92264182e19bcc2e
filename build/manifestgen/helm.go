package manifestgen

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Release and Namespace are the release name and namespace the kustomize
// bases are rendered with.
const (
	Release   = "liqo-relay"
	Namespace = "liqo-relay"
)

// KubeVersion is the Kubernetes version `helm template` renders for: the
// floor of the chart's kubeVersion. Without it helm assumes the version
// it was built for, which a helm built from source leaves at v1.20, below
// that floor. The templates do not read .Capabilities, so the output does
// not depend on it.
const KubeVersion = "v1.30.0"

// Helm renders chartDir with `helm template`, CRDs included, with the
// --set assignments in sets.
func Helm(ctx context.Context, helm, chartDir string, sets ...string) ([]byte, error) {
	args := []string{"template", Release, chartDir, "--namespace", Namespace, "--include-crds", "--kube-version", KubeVersion}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(ctx, helm, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}
