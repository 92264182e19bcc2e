package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeTestEndsWithSummary reads the recipe of `make test`: the last go
// test it runs must be the one piped into testsummary, so that the count of
// tests skipped for lack of root is the last thing the target prints.
func TestMakeTestEndsWithSummary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var recipe []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "test:"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, line)
		case in:
			in = false
		}
	}
	if len(recipe) == 0 {
		t.Fatal("Makefile has no recipe for test")
	}
	text := strings.Join(recipe, "\n")
	const goTest = "$(GO) test "
	last := strings.LastIndex(text, goTest)
	if last < 0 {
		t.Fatalf("the test recipe runs no %q:\n%s", goTest, text)
	}
	cmd, _, _ := strings.Cut(text[last:], "\n")
	if !strings.Contains(cmd, "| bin/testsummary") {
		t.Errorf("the last go test of `make test` is not piped into bin/testsummary, so the root-skip footer is not printed last:\n%s", cmd)
	}
}
