package config

import (
	"errors"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestInvalidGolden shows, and pins, the whole report for a file full of
// mistakes: what a user sees.
func TestInvalidGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(data)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse = %v, want Errors", err)
	}
	got := errs.Error() + "\n"
	const golden = "testdata/invalid.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("report differs from %s (go test -update rewrites it):\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}
