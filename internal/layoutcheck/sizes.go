package layoutcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

const (
	// fileLimit is the most lines a non-test Go file may have.
	fileLimit = 450
	// funcLimit is the most lines a function may have, unless it is a flat
	// table named in FlatTables.
	funcLimit = 80
)

// FlatTables are the functions allowed over funcLimit: each is one flat
// list (flags, validation checks, metric definitions) that reads top to
// bottom and would only be harder to follow cut in pieces. The key is
// "path:function" ("path:Type.method" for methods).
var FlatTables = map[string]string{
	"internal/control/metrics/metrics.go:New": "the relay's metric definitions, one per statement",
}

// Violation is one file or function over its limit.
type Violation struct {
	Where string // "path" or "path:function"
	Lines int
	Limit int
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %d lines, over the limit of %d", v.Where, v.Lines, v.Limit)
}

// SizeViolations parses one Go source and reports a non-test file over
// fileLimit and every function over funcLimit that allowed does not name.
// Generated files are exempt.
func SizeViolations(path string, src []byte, allowed map[string]string) ([]Violation, error) {
	if generated(src) {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	var out []Violation
	if lines := fset.Position(f.End()).Line; !strings.HasSuffix(path, "_test.go") && lines > fileLimit {
		out = append(out, Violation{Where: path, Lines: lines, Limit: fileLimit})
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || strings.HasSuffix(path, "_test.go") {
			continue
		}
		lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		where := path + ":" + funcName(fd)
		if lines > funcLimit && allowed[where] == "" {
			out = append(out, Violation{Where: where, Lines: lines, Limit: funcLimit})
		}
	}
	return out, nil
}

// funcName is "Name" for a function and "Type.Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
