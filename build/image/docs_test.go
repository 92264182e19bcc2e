package image

import (
	"os"
	"strings"
	"testing"
)

// jsonList formats a string list as docs/image.md writes it.
func jsonList(v []string) string {
	return `["` + strings.Join(v, `", "`) + `"]`
}

// TestDocsStateTheSettings checks that docs/image.md states the builder's
// settings and file names, so that a change to one shows in the other.
func TestDocsStateTheSettings(t *testing.T) {
	doc, err := os.ReadFile("../../docs/image.md")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"| Entrypoint | `" + jsonList(Entrypoint()) + "`",
		"| Cmd | `" + jsonList(Cmd()) + "`",
		"| User | `" + User + "`",
		"| WorkingDir | `" + WorkingDir + "`",
		"`bin/image/" + OCIArchiveName + "`",
		"`" + Repository + ":VERSION`",
	}
	for _, e := range Env() {
		want = append(want, "| Env | `"+e+"`")
	}
	for _, p := range Platforms() {
		want = append(want, "`bin/image/"+DockerArchiveName(p)+"`")
	}
	for k, v := range Labels("VERSION", "REVISION") {
		want = append(want, "`"+k+"="+v+"`")
	}
	want = append(want, "CGO_ENABLED=0 go "+strings.Join(GoBuildArgs("VERSION", "REVISION", "BUILD_DATE", "")[:4], " "))
	for _, w := range want {
		if !strings.Contains(string(doc), w) {
			t.Errorf("docs/image.md does not state %s", w)
		}
	}
}
