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

// Helm renders chartDir with `helm template`, CRDs included, with the
// --set assignments in sets.
func Helm(ctx context.Context, helm, chartDir string, sets ...string) ([]byte, error) {
	args := []string{"template", Release, chartDir, "--namespace", Namespace, "--include-crds"}
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
