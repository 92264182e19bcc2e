package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/version"
)

var versionKeys = []string{"version", "commit", "buildDate", "goVersion", "protocolVersion"}

// decodeVersion parses `relay version --json` and checks that every key
// is there and not empty.
func decodeVersion(t *testing.T, out string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	for _, k := range versionKeys {
		if v[k] == nil || v[k] == "" {
			t.Errorf("version --json: %s is %v in %s", k, v[k], out)
		}
	}
	return v
}

func TestVersion(t *testing.T) {
	code, out, stderr := runCmd(t, "", "version", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("version --json: exit %d, stderr %q", code, stderr)
	}
	v := decodeVersion(t, out)
	if v["protocolVersion"] != float64(health.Version) || v["commit"] != version.Unknown || v["buildDate"] != version.Unknown {
		t.Errorf("version --json without -ldflags: %s; want protocol %d and %q commit and date", out, health.Version, version.Unknown)
	}

	code, out, _ = runCmd(t, "", "version")
	want := regexp.MustCompile(`^relay \S+ \(go\S+, commit unknown, built unknown, probe protocol 1, \w+/\w+\)\n$`)
	if code != 0 || !want.MatchString(out) {
		t.Errorf("version: exit %d, stdout %q; want it to match %s", code, out, want)
	}
	if code, alias, _ := runCmd(t, "", "--version"); code != 0 || alias != out {
		t.Errorf("--version: exit %d, %q; want %q", code, alias, out)
	}
}

// TestVersionFromMakefile builds the relay with the Makefile's LDFLAGS (as
// `make build` would, for a given commit and SOURCE_DATE_EPOCH) and checks
// that `relay version --json` shows them: the -X names exist, and the
// build date is the epoch in RFC 3339 UTC.
func TestVersionFromMakefile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the relay once more")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	dry, err := exec.Command("make", "-s", "-n", "-C", "../..", "build",
		"VERSION=9.8.7-test", "REVISION="+commit, "SOURCE_DATE_EPOCH=1700000000").Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	m := regexp.MustCompile(`-ldflags '([^']*)'`).FindSubmatch(dry)
	if m == nil {
		t.Fatalf("make -n build runs no go build -ldflags '...':\n%s", dry)
	}
	bin := filepath.Join(t.TempDir(), "relay")
	build := exec.Command("go", "build", "-ldflags", string(m[1]), "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags %q: %v\n%s", m[1], err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("relay version --json: %v", err)
	}
	v := decodeVersion(t, string(out))
	for k, want := range map[string]string{"version": "9.8.7-test", "commit": commit, "buildDate": "2023-11-14T22:13:20Z"} {
		if v[k] != want {
			t.Errorf("with the Makefile's LDFLAGS, %s is %v, want %s", k, v[k], want)
		}
	}
	if s, _ := v["goVersion"].(string); !strings.HasPrefix(s, "go") {
		t.Errorf("goVersion %q", s)
	}
}
