package depscheck

import (
	"strings"
	"testing"
)

// kubeRoots are the Kubernetes packages: the controllers, the webhook and
// the typed clients under internal/kube.
var kubeRoots = []string{module + "/internal/kube"}

// adminPackage is the relay's admin HTTP server, client and renderers.
const adminPackage = module + "/internal/control/admin"

// under reports whether path is root or a package below it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// kubeAdminViolations returns one message per import of the admin package
// (or a package below it, such as its fake admintest) by a Kubernetes
// package, tests included. The controllers read a relay's status as the
// data types of internal/core/status; the HTTP package that serves them
// belongs to the relay's own control surface.
func kubeAdminViolations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		kube := false
		for _, r := range kubeRoots {
			kube = kube || under(p.ImportPath, r)
		}
		if !kube {
			continue
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if under(imp, adminPackage) {
					bad = append(bad, p.ImportPath+" imports "+imp+": Kubernetes packages take the status types from "+module+"/internal/core/status, not the admin HTTP package")
				}
			}
		}
	}
	return bad
}

func TestKubeDoesNotImportAdmin(t *testing.T) {
	for _, msg := range kubeAdminViolations(listPackages(t)) {
		t.Error(msg)
	}
}

// TestKubeAdminRuleCatches proves the rule on synthetic package lists: a
// controller, its tests and a package under internal/kube are caught
// importing admin or admintest; the status package, the agent and
// look-alike paths are not.
func TestKubeAdminRuleCatches(t *testing.T) {
	status := module + "/internal/core/status"
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want string // substring of the one expected violation; "" for none
	}{
		{"clean", []pkg{
			{ImportPath: module + "/internal/kube/peersync", Imports: []string{status}, TestImports: []string{status}},
			{ImportPath: module + "/internal/agent", Imports: []string{adminPackage, status}},
			{ImportPath: module + "/cmd/relay", Imports: []string{adminPackage}},
			{ImportPath: module + "/internal/kubelike", Imports: []string{adminPackage}},
			{ImportPath: module + "/internal/kube/x", Imports: []string{adminPackage + "ish"}},
		}, ""},
		{"controller imports admin", []pkg{{ImportPath: module + "/internal/kube/peersync", Imports: []string{status, adminPackage}}},
			module + "/internal/kube/peersync imports " + adminPackage + ":"},
		{"test imports admin", []pkg{{ImportPath: module + "/internal/kube/provider", TestImports: []string{adminPackage}}},
			module + "/internal/kube/provider imports " + adminPackage + ":"},
		{"external test imports admintest", []pkg{{ImportPath: module + "/internal/kube/peersync", XTestImports: []string{adminPackage + "/admintest"}}},
			"imports " + adminPackage + "/admintest"},
		{"internal/kube imports admin", []pkg{{ImportPath: module + "/internal/kube/peersync", Imports: []string{adminPackage}}},
			module + "/internal/kube/peersync imports"},
		{"internal/kube itself", []pkg{{ImportPath: module + "/internal/kube", Imports: []string{adminPackage}}},
			module + "/internal/kube imports"},
	} {
		got := kubeAdminViolations(tc.pkgs)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected violations %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: got %q, want one violation containing %q", tc.name, got, tc.want)
		}
	}
}
