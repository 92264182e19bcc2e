package layoutcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// SleepMark starts the comment a test's time.Sleep must carry, on its
// line or the line above: what real kernel, socket, process or server it
// waits for or paces. A sleep that waits for a decision has no place in a
// test: decisions run on fake time (internal/core/engine, the simulator,
// the golden traces).
const SleepMark = "real:"

// Sleep is one time.Sleep call of a test file.
type Sleep struct {
	Where  string // path:line
	Reason string // the comment after SleepMark; "" when there is none
}

// Sleeps lists the time.Sleep calls of a Go test source, with the reason
// each one gives.
func Sleeps(path string, src []byte) ([]Sleep, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	timeName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"time"` {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" {
		return nil, nil
	}
	reasons := map[int]string{} // line -> reason of a comment on it
	for _, g := range f.Comments {
		for _, c := range g.List {
			if _, after, ok := strings.Cut(c.Text, SleepMark); ok {
				reasons[fset.Position(c.Pos()).Line] = strings.TrimSpace(after)
			}
		}
	}
	var out []Sleep
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != timeName {
			return true
		}
		line := fset.Position(call.Pos()).Line
		reason, ok := reasons[line]
		if !ok {
			reason = reasons[line-1]
		}
		out = append(out, Sleep{Where: fmt.Sprintf("%s:%d", path, line), Reason: reason})
		return true
	})
	return out, nil
}
