package main

import (
	"bytes"
	"strings"
	"testing"
)

// A run as test2json writes it: one package passes with a root skip and a
// skip for another reason, one fails, one has no tests, one does not build.
const input = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestNS"}
{"Action":"output","Package":"m/a","Test":"TestNS","Output":"=== RUN   TestNS\n"}
{"Action":"output","Package":"m/a","Test":"TestNS","Output":"    netns.go:34: needs root (network namespaces): run as root, CI does\n"}
{"Action":"output","Package":"m/a","Test":"TestNS","Output":"--- SKIP: TestNS (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestNS"}
{"Action":"run","Package":"m/a","Test":"TestSlow"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"    x_test.go:9: skipped in -short mode\n"}
{"Action":"skip","Package":"m/a","Test":"TestSlow"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Output":"PASS\n"}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.010s\n"}
{"Action":"pass","Package":"m/a"}
{"Action":"run","Package":"m/b","Test":"TestBad"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"    b_test.go:7: wrong answer\n"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"m/b","Test":"TestBad"}
{"Action":"run","Package":"m/b","Test":"TestNS2/sub"}
{"Action":"output","Package":"m/b","Test":"TestNS2/sub","Output":"    needs root (network namespaces)\n"}
{"Action":"skip","Package":"m/b","Test":"TestNS2/sub"}
{"Action":"output","Package":"m/b","Output":"FAIL\n"}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t0.020s\n"}
{"Action":"fail","Package":"m/b"}
{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}
{"Action":"skip","Package":"m/c"}
{"ImportPath":"m/d","Action":"build-output","Output":"d.go:3:1: syntax error\n"}
{"Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}
{"Action":"fail","Package":"m/d"}
not json from a tool
`

func TestSummarize(t *testing.T) {
	var out bytes.Buffer
	s, err := summarize(strings.NewReader(input), &out)
	if err != nil {
		t.Fatal(err)
	}
	want := "ok  \tm/a\t0.010s\n" +
		"    b_test.go:7: wrong answer\n--- FAIL: TestBad (0.00s)\n" +
		"FAIL\nFAIL\tm/b\t0.020s\n" +
		"?   \tm/c\t[no test files]\n" +
		"d.go:3:1: syntax error\nFAIL\tm/d [build failed]\n" +
		"not json from a tool\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if s.total() != 2 || s.rootSkips["m/a"] != 1 || s.rootSkips["m/b"] != 1 {
		t.Errorf("root skips %v, want one in m/a and one in m/b", s.rootSkips)
	}
	var foot bytes.Buffer
	writeFooter(&foot, s, false)
	if !strings.Contains(foot.String(), "2 tests SKIPPED for lack of root") || !strings.Contains(foot.String(), "1  m/b") {
		t.Errorf("footer:\n%s", foot.String())
	}
}

// A test that panics gets no fail event of its own; the package's fail
// event must still show its output.
func TestSummarizePanic(t *testing.T) {
	in := `{"Action":"run","Package":"m/p","Test":"TestBoom"}
{"Action":"output","Package":"m/p","Test":"TestBoom","Output":"panic: boom\n"}
{"Action":"output","Package":"m/p","Output":"FAIL\tm/p\t0.1s\n"}
{"Action":"fail","Package":"m/p"}
`
	var out bytes.Buffer
	if _, err := summarize(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "panic: boom\nFAIL\tm/p\t0.1s\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFooterNoSkips(t *testing.T) {
	var b bytes.Buffer
	writeFooter(&b, summary{rootSkips: map[string]int{}}, true)
	if b.Len() != 0 {
		t.Errorf("root with no skips: %q, want nothing", b.String())
	}
	writeFooter(&b, summary{rootSkips: map[string]int{}}, false)
	if !strings.Contains(b.String(), "no test skipped for lack of root") {
		t.Errorf("non-root with no skips: %q", b.String())
	}
}
