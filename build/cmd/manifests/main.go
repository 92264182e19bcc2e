// Command manifests writes the generated files of manifests/ (`make
// manifests`): the kustomize bases from the Helm chart and the Liqo gateway
// templates with the relay from Liqo's examples. Run it from the
// repository's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/liqo-relay/relay/build/manifestgen"
)

func main() {
	helm := flag.String("helm", "helm", "the helm binary")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(context.Background(), *helm, *root); err != nil {
		fmt.Fprintln(os.Stderr, "manifests:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, helm, root string) error {
	chart := filepath.Join(root, "manifests", "chart", "liqo-relay")
	for _, b := range manifestgen.Bases {
		files, err := manifestgen.Kustomize(ctx, helm, chart, b)
		if err != nil {
			return err
		}
		dir := filepath.Join(root, "manifests", "kustomize", b.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("kustomize base %s: %w", b.Name, err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return fmt.Errorf("kustomize base %s: %w", b.Name, err)
			}
		}
	}
	outDir := filepath.Join(root, "manifests", "liqo-template")
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("liqo templates: %w", err)
	}
	for _, t := range manifestgen.LiqoTemplates {
		example, err := os.ReadFile(filepath.Join(root, "test", "fixtures", "liqo-v1.2.0", "examples", t.Fixture))
		if err != nil {
			return fmt.Errorf("liqo template: %w", err)
		}
		out, err := manifestgen.AddRelay(example, t)
		if err != nil {
			return fmt.Errorf("liqo template: %w", err)
		}
		if err := os.WriteFile(filepath.Join(outDir, t.Out), out, 0o644); err != nil {
			return fmt.Errorf("liqo template: %w", err)
		}
	}
	return nil
}
