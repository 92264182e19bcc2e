package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// aboutRoot matches a skip message that names a capability or says that
// something needs root (not one that needs a tool a root run installs).
var aboutRoot = regexp.MustCompile(`(?i)\bcap_[a-z_]+|needs[^:;]*\broot\b`)

// TestRootSkipsCarryMarker reads every Go file of the repository and checks
// that each t.Skip or t.Skipf whose message is about root or a capability
// only root has contains rootSkip: otherwise testsummary does not count it,
// and a run as an ordinary user passes for a full one.
func TestRootSkipsCarryMarker(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Skip" && sel.Sel.Name != "Skipf") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			msg, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if !aboutRoot.MatchString(msg) {
				return true
			}
			checked++
			if !strings.Contains(msg, rootSkip) {
				t.Errorf("%s: skip %q is about root but lacks %q: testsummary will not count it", fset.Position(lit.Pos()), msg, rootSkip)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no skip for lack of root: the walk missed the repository")
	}
}
