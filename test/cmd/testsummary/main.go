// Command testsummary reads `go test -json` on stdin and writes what plain
// `go test` would have written: the package lines (ok, FAIL, no test
// files), build errors, and the output of failed tests only. At the end it
// says how many tests skipped for lack of root (their skip message contains
// "needs root", see internal/testbed/netns.RequireRoot), so that a run as an
// ordinary user is not mistaken for a full one. `make test` pipes into it
// with pipefail, so go test's exit status is the target's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// rootSkip is the marker of a skip for lack of root.
const rootSkip = "needs root"

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type testKey struct{ pkg, test string }

// summary is what a run came to.
type summary struct {
	rootSkips map[string]int // per package
}

func (s summary) total() int {
	n := 0
	for _, c := range s.rootSkips {
		n += c
	}
	return n
}

func main() {
	s, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(1)
	}
	writeFooter(os.Stdout, s, os.Geteuid() == 0)
}

// summarize copies the plain go test output of the JSON events in r to w.
// Lines that are not JSON (a tool's own messages) pass through unchanged.
func summarize(r io.Reader, w io.Writer) (summary, error) {
	s := summary{rootSkips: map[string]int{}}
	held := map[testKey][]string{} // output of tests still running
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := testKey{ev.Package, ev.Test}
		switch {
		case ev.Action == "build-output":
			fmt.Fprint(w, ev.Output)
		case ev.Test == "" && ev.Action == "output":
			// Package lines; plain go test prints PASS only with -v. A
			// package that fails with tests still running (panic,
			// timeout): their output explains it, so it comes first.
			if strings.HasPrefix(ev.Output, "FAIL") {
				flush(w, held, ev.Package)
			}
			if ev.Output != "PASS\n" {
				fmt.Fprint(w, ev.Output)
			}
		case ev.Test == "" && ev.Action == "fail":
			flush(w, held, ev.Package)
		case ev.Test == "":
		case ev.Action == "output":
			// Plain go test prints no "=== RUN" lines for failed tests.
			if !strings.HasPrefix(ev.Output, "=== RUN") {
				held[k] = append(held[k], ev.Output)
			}
		case ev.Action == "fail":
			fmt.Fprint(w, strings.Join(held[k], ""))
			delete(held, k)
		case ev.Action == "skip":
			if strings.Contains(strings.Join(held[k], ""), rootSkip) {
				s.rootSkips[ev.Package]++
			}
			delete(held, k)
		case ev.Action == "pass":
			delete(held, k)
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("reading go test -json: %w", err)
	}
	return s, nil
}

// flush writes and forgets the held output of pkg's unfinished tests, in
// test name order.
func flush(w io.Writer, held map[testKey][]string, pkg string) {
	var keys []testKey
	for k := range held {
		if k.pkg == pkg {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].test < keys[j].test })
	for _, k := range keys {
		fmt.Fprint(w, strings.Join(held[k], ""))
		delete(held, k)
	}
}

// writeFooter says how many tests skipped for lack of root, per package.
func writeFooter(w io.Writer, s summary, root bool) {
	n := s.total()
	if n == 0 {
		if !root {
			fmt.Fprintln(w, "testsummary: no test skipped for lack of root")
		}
		return
	}
	pkgs := make([]string, 0, len(s.rootSkips))
	for p := range s.rootSkips {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	fmt.Fprintf(w, "testsummary: %d tests SKIPPED for lack of root: this was not a full run (run make test as root for the namespace tests):\n", n)
	for _, p := range pkgs {
		fmt.Fprintf(w, "testsummary:   %4d  %s\n", s.rootSkips[p], p)
	}
}
