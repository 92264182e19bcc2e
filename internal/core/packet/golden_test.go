package packet

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// TestGolden translates packets from testdata/golden.txt and compares with
// the expected bytes, which testdata/golden.py computed independently
// (building both versions from scratch in Python), so that the translator
// and the Go reference cannot agree on a shared mistake.
func TestGolden(t *testing.T) {
	f, err := os.Open("testdata/golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := mustTranslator(t, testMappings)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 {
			t.Fatalf("bad line %q", line)
		}
		in, err1 := hex.DecodeString(fields[2])
		want, err2 := hex.DecodeString(fields[3])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad hex", fields[0])
		}
		got := append([]byte(nil), in...)
		changed, err := apply(tr, got, fields[1] == "out")
		if err != nil || !changed {
			t.Fatalf("%s: changed=%v err=%v", fields[0], changed, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got  %x\n want %x", fields[0], got, want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("only %d golden cases", n)
	}
}
