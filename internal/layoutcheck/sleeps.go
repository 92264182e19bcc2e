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
// the golden traces), and a sleep inside a testing/synctest bubble moves
// its fake clock, which needs no reason.
const SleepMark = "real:"

// BubbleMark starts the comment of a sleep in a helper that runs inside a
// testing/synctest bubble (it moves the bubble's fake clock) but outside
// the function given to synctest.Test, where Sleeps cannot see it.
const BubbleMark = "synctest:"

// Sleep is one time.Sleep call of a test file.
type Sleep struct {
	Where  string // path:line
	Reason string // the comment after SleepMark; "" when there is none
	// Bubble: the sleep runs inside a testing/synctest bubble, on its
	// fake clock, and needs no reason.
	Bubble bool
}

// Sleeps lists the time.Sleep calls of a Go test source, with the reason
// each one gives.
func Sleeps(path string, src []byte) ([]Sleep, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	timeName, synctestName := importName(f, "time"), importName(f, "testing/synctest")
	if timeName == "" {
		return nil, nil
	}
	reasons := map[int]string{} // line -> reason of a comment on it
	marked := map[int]bool{}    // line -> a BubbleMark comment is on it
	for _, g := range f.Comments {
		for _, c := range g.List {
			line := fset.Position(c.Pos()).Line
			if _, after, ok := strings.Cut(c.Text, SleepMark); ok {
				reasons[line] = strings.TrimSpace(after)
			}
			if strings.Contains(c.Text, BubbleMark) {
				marked[line] = true
			}
		}
	}
	// bubbles are the source ranges of the functions given to
	// synctest.Test.
	var bubbles [][2]token.Pos
	var sleeps []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch {
		case isCall(call, synctestName, "Test"):
			for _, a := range call.Args {
				if fl, ok := a.(*ast.FuncLit); ok {
					bubbles = append(bubbles, [2]token.Pos{fl.Pos(), fl.End()})
				}
			}
		case isCall(call, timeName, "Sleep"):
			sleeps = append(sleeps, call)
		}
		return true
	})
	var out []Sleep
	for _, call := range sleeps {
		line := fset.Position(call.Pos()).Line
		reason, ok := reasons[line]
		if !ok {
			reason = reasons[line-1]
		}
		s := Sleep{Where: fmt.Sprintf("%s:%d", path, line), Reason: reason, Bubble: marked[line] || marked[line-1]}
		for _, b := range bubbles {
			if call.Pos() >= b[0] && call.End() <= b[1] {
				s.Bubble = true
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// importName is the name a file imports path under, "" when it does not.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"`+path+`"` {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// isCall reports whether call is pkg.name(...), pkg being an import name.
func isCall(call *ast.CallExpr, pkg, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || pkg == "" || sel.Sel.Name != name {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg
}
