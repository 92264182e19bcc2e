package v1alpha1_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// controllerGen is the pinned controller-tools generator; make generate uses
// the same version.
const controllerGen = "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"

// TestGeneratedFilesUpToDate regenerates the CRDs and the deep-copy code
// into a scratch directory and fails when the committed ones differ: run
// `make generate` after changing a type.
func TestGeneratedFilesUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs controller-gen (about a minute); not in -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	// controller-gen writes deep-copy code next to the types, so it runs on
	// a copy of the API package.
	api := filepath.Join(scratch, "api", "v1alpha1")
	if err := os.MkdirAll(api, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".go" || e.Name() == "zz_generated.deepcopy.go" {
			continue
		}
		b, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(api, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(scratch, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	crds := filepath.Join(scratch, "crds")
	cmd := exec.Command("go", "run", controllerGen, "object", "paths=./api/...",
		"crd:allowDangerousTypes=true", "output:crd:artifacts:config="+crds)
	cmd.Dir = scratch
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, out)
	}
	compare(t, filepath.Join(api, "zz_generated.deepcopy.go"), "zz_generated.deepcopy.go")
	gen, err := os.ReadDir(crds)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join(root, "manifests", "crds", "relay.liqo-relay.io_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(gen) != len(committed) {
		t.Errorf("controller-gen made %d CRDs, manifests/crds has %d: run make generate", len(gen), len(committed))
	}
	for _, e := range gen {
		compare(t, filepath.Join(crds, e.Name()), filepath.Join(root, "manifests", "crds", e.Name()))
	}
}

func compare(t *testing.T, generated, committed string) {
	t.Helper()
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Errorf("%s: %v (run make generate)", committed, err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from what controller-gen generates: run make generate", committed)
	}
}
