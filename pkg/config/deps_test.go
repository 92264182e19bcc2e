package config

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPureImports keeps the package pure: no network, file system,
// processes, clocks or heavy dependencies in non-test files.
func TestPureImports(t *testing.T) {
	allowed := map[string]bool{
		"bytes": true, "cmp": true, "encoding/base64": true, "encoding/hex": true, "errors": true,
		"fmt": true, "io": true, "math": true, "net/netip": true, "slices": true,
		"strconv": true, "strings": true, "time": true,
		"go.yaml.in/yaml/v3":             true,
		"golang.org/x/crypto/curve25519": true,
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %q, which a pure package must not", name, path)
			}
		}
	}
}
