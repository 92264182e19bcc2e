package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var epoch = time.Unix(1700000000, 0)

// writeChart makes a small chart in a temporary directory.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var chartFiles0 = map[string]string{
	"Chart.yaml":           "apiVersion: v2\nname: demo\n# the chart's\nversion: 0.1.0\nappVersion: \"0.1.0\"\n",
	"values.yaml":          "image:\n  tag: \"\"\n",
	"templates/a.yaml":     "kind: ConfigMap\n",
	"templates/a.yaml.bak": "stale\n",
	".helmignore":          "*.bak\nscratch/\n",
	"scratch/notes.txt":    "not shipped\n",
	"crds/b.yaml":          "kind: CustomResourceDefinition\n",
}

// entries reads a .tgz into name -> body, checking every header is fixed.
func entries(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header: time %v name %q, want neither", zr.ModTime, zr.Name)
	}
	out := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Mode != 0o644 {
			t.Errorf("%s: time %v uid %d gid %d mode %o, want the epoch, root, 0644", h.Name, h.ModTime, h.Uid, h.Gid, h.Mode)
		}
		body, _ := io.ReadAll(tr)
		out[h.Name] = string(body)
	}
}

// TestPackChartStampsAndIgnores: the archive holds the chart's files under
// its name, without the ignored ones and .helmignore, with Chart.yaml's
// version and appVersion the release's and nothing else in it changed.
func TestPackChartStampsAndIgnores(t *testing.T) {
	dir := writeChart(t, chartFiles0)
	var b bytes.Buffer
	if err := PackChart(&b, dir, "1.2.3-rc.1", epoch); err != nil {
		t.Fatal(err)
	}
	got := entries(t, b.Bytes())
	want := []string{"demo/Chart.yaml", "demo/crds/b.yaml", "demo/templates/a.yaml", "demo/values.yaml"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", keys(got), want)
	}
	for _, w := range want {
		if _, ok := got[w]; !ok {
			t.Fatalf("entries %v, want %v", keys(got), want)
		}
	}
	wantChart := "apiVersion: v2\nname: demo\n# the chart's\nversion: \"1.2.3-rc.1\"\nappVersion: \"1.2.3-rc.1\"\n"
	if got["demo/Chart.yaml"] != wantChart {
		t.Errorf("Chart.yaml:\n%s\nwant:\n%s", got["demo/Chart.yaml"], wantChart)
	}
	if got["demo/values.yaml"] != chartFiles0["values.yaml"] {
		t.Errorf("values.yaml changed: %q", got["demo/values.yaml"])
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPackChartReproducible: the same chart, version and time give the
// same bytes, whatever the files' own times and modes; another version
// gives other bytes.
func TestPackChartReproducible(t *testing.T) {
	dir := writeChart(t, chartFiles0)
	var a, b, c bytes.Buffer
	if err := PackChart(&a, dir, "1.0.0", epoch); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "values.yaml"), time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "templates/a.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := PackChart(&b, dir, "1.0.0", epoch); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two packs of one chart differ")
	}
	if err := PackChart(&c, dir, "1.0.1", epoch); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("two versions packed the same")
	}
}

// TestPackChartRefuses: a version a chart or an image tag cannot carry,
// and a Chart.yaml without exactly one version or appVersion, are refused
// with the reason.
func TestPackChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, version, chart, want string
	}{
		{"not semver", "v1.2", chartFiles0["Chart.yaml"], "not a SemVer 2"},
		{"leading zero", "1.02.0", chartFiles0["Chart.yaml"], "not a SemVer 2"},
		{"numeric pre-release with a leading zero", "0.0.0-0123", chartFiles0["Chart.yaml"], "not a SemVer 2"},
		{"build metadata", "1.0.0+abc", chartFiles0["Chart.yaml"], "without build metadata"},
		{"no appVersion", "1.0.0", "apiVersion: v2\nname: demo\nversion: 0.1.0\n", "want one top-level appVersion, found 0"},
		{"two versions", "1.0.0", "name: demo\nversion: 1\nversion: 2\nappVersion: 1\n", "want one top-level version, found 2"},
		{"no name", "1.0.0", "version: 1\nappVersion: 1\n", "no top-level name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"Chart.yaml": tc.chart}
			err := PackChart(io.Discard, writeChart(t, files), tc.version, epoch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
	for _, v := range []string{"0.0.0-cf9174e45531", "0.0.0-cf9174e45531-dirty", "0.0.0-g012345678901", "1.2.3", "10.0.0-rc.1"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// TestVersionScript: build/version.sh prints a version that a chart and
// an image tag can carry, for this checkout as it is.
func TestVersionScript(t *testing.T) {
	out, err := exec.Command("../version.sh").Output()
	if err != nil {
		t.Fatalf("build/version.sh: %v", err)
	}
	v := strings.TrimSpace(string(out))
	if err := CheckVersion(v); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && v == "0.0.0-unknown" {
		t.Fatal("build/version.sh says unknown inside a git checkout")
	}
}
