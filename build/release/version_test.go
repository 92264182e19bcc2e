package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionScriptCases runs build/version.sh in a scratch checkout: a
// commit, the same with a tracked change and with an untracked file (both
// -dirty), a tag (its version), a tag with a change (-dirty too), and a
// tag that is not X.Y.Z (ignored: the commit's version).
func TestVersionScriptCases(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	script, err := os.ReadFile("../version.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "build", "version.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	version := func() string {
		t.Helper()
		out, err := exec.Command(filepath.Join(dir, "build", "version.sh")).Output()
		if err != nil {
			t.Fatalf("version.sh: %v", err)
		}
		v := strings.TrimSpace(string(out))
		if err := CheckVersion(v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write(".gitignore", "bin/\n")
	write("a.go", "package a\n")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	commit := git("rev-parse", "--short=12", "HEAD")
	want := "0.0.0-" + commit
	if strings.Trim(commit, "0123456789") == "" && strings.HasPrefix(commit, "0") {
		want = "0.0.0-g" + commit
	}
	check := func(what, want string) {
		t.Helper()
		if got := version(); got != want {
			t.Errorf("%s: version %q, want %q", what, got, want)
		}
	}
	check("a commit", want)
	write("a.go", "package a // changed\n")
	check("a tracked change", want+"-dirty")
	git("checkout", "-q", "a.go")
	write("b.go", "package a\n")
	check("an untracked file", want+"-dirty")
	os.Remove(filepath.Join(dir, "b.go"))
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("bin/relay", "ignored")
	check("an ignored file", want)
	git("tag", "v1.2")
	check("a tag that is not X.Y.Z", want)
	git("tag", "v1.2.3")
	check("a tag", "1.2.3")
	write("a.go", "package a // changed\n")
	check("a tag with a change", "1.2.3-dirty")
}
