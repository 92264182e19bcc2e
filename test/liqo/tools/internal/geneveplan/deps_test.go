package geneveplan

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure fails when a non-test file of this package imports I/O or the
// Kubernetes client side: the package decides, its callers act.
func TestPure(t *testing.T) {
	forbidden := []string{"net", "os", "os/exec", "syscall", "time", "log", "net/http", "unsafe"}
	forbiddenPrefix := []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/vishvananda/"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad {
					t.Errorf("%s imports %s", f, path)
				}
			}
			for _, bad := range forbiddenPrefix {
				if strings.HasPrefix(path, bad) {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
}
