package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir is where the golden traces are, relative to this package.
const Dir = "testdata"

// wantMark separates a golden file's script from its output.
const wantMark = "--- want\n"

// Golden is one golden trace: a script and the log it must give.
type Golden struct {
	Name, Path   string
	Script, Want string
}

// Load reads every golden trace (*.trace) in dir.
func Load(dir string) ([]Golden, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.trace"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no golden traces in %s", dir)
	}
	var out []Golden
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		// A trace without its output yet (a new one) has Want empty:
		// Check fails it unless it is writing the outputs.
		script, want, _ := strings.Cut(string(b), wantMark)
		out = append(out, Golden{Name: strings.TrimSuffix(filepath.Base(f), ".trace"), Path: f, Script: script, Want: want})
	}
	return out, nil
}

// Check plays every golden trace in dir against the relays newRelay
// builds and fails for each log that differs from the trace's. With
// update, it writes the logs into the files instead (only the engine's
// own driver should: the other drivers are checked against it).
func Check(t *testing.T, dir string, newRelay Factory, update bool) {
	t.Helper()
	gs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gs {
		t.Run(g.Name, func(t *testing.T) {
			got, err := Run(g.Script, newRelay)
			if err != nil {
				t.Fatalf("%s: %v", g.Path, err)
			}
			if update {
				if err := os.WriteFile(g.Path, []byte(g.Script+wantMark+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != g.Want {
				t.Errorf("%s: the log differs from the golden one (-want +got):\n%s", g.Path, diff(g.Want, got))
			}
		})
	}
}

// diff is a line diff of want and got: lines only in want start with -,
// lines only in got with +, from the first line that differs.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	for j := i; j < len(w) && j < i+20; j++ {
		fmt.Fprintf(&b, "-%s\n", w[j])
	}
	for j := i; j < len(g) && j < i+20; j++ {
		fmt.Fprintf(&b, "+%s\n", g[j])
	}
	return b.String()
}
