package layoutcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryTargetHasHelp(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Makefile", "perf/perf.mk"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range UndescribedTargets(string(b)) {
			t.Errorf("%s: target %s has no \"## description\" for make help", name, target)
		}
	}
}

func TestUndescribedTargetsCatch(t *testing.T) {
	mk := "GO ?= go\nX := a:b\nbuild: ## the binary\n\tgo build\nclean:\n\trm -rf bin\ntest: build ##\n"
	if got := strings.Join(UndescribedTargets(mk), " "); got != "clean test" {
		t.Errorf("got %q, want \"clean test\"", got)
	}
}

// TestCILintsBeforeTesting: CI runs make lint, then the README's test
// command.
func TestCILintsBeforeTesting(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lint, test := strings.Index(string(b), "\nmake lint\n"), strings.Index(string(b), "\nmake test\n")
	if lint < 0 || test < 0 || lint > test {
		t.Errorf(".ci/run must run `make lint` and then `make test`, each on its own line:\n%s", b)
	}
}
