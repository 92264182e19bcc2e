package depscheck

import (
	"strings"
	"testing"
)

// execViolations returns one message per package of this module that the
// product binary links and that imports os/exec. The relay image is
// scratch (docs/image.md): there is no binary to run, so the relay talks to
// the kernel over netlink only (nftables, routes, rules, conntrack).
// Dependencies outside the module (client-go's exec credential plugins)
// are not checked.
func execViolations(pkgs []pkg) []string {
	var product *pkg
	byPath := map[string]pkg{}
	for i, p := range pkgs {
		byPath[p.ImportPath] = p
		if p.ImportPath == productMain {
			product = &pkgs[i]
		}
	}
	if product == nil {
		return []string{productMain + " not found"}
	}
	var bad []string
	for _, path := range append([]string{productMain}, product.Deps...) {
		p, ok := byPath[path]
		if !ok {
			continue // outside the module
		}
		for _, imp := range p.Imports {
			if imp == "os/exec" {
				bad = append(bad, p.ImportPath+" imports os/exec and is linked into "+productMain+": the image is scratch, there is nothing to run; use netlink")
			}
		}
	}
	return bad
}

func TestProductRunsNoBinaries(t *testing.T) {
	for _, msg := range execViolations(listPackages(t)) {
		t.Error(msg)
	}
}

// TestExecRuleCatches proves the rule on synthetic package lists: the old
// internal/dataplane/liqonet (nft -f -) is caught, test tooling and outside packages are
// not.
func TestExecRuleCatches(t *testing.T) {
	relay := pkg{Name: "main", ImportPath: productMain, Deps: []string{"os/exec", "k8s.io/client-go/tools/auth", module + "/internal/dataplane/liqonet"}}
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want string
	}{
		{"clean", []pkg{relay, {ImportPath: module + "/internal/dataplane/liqonet", Imports: []string{"github.com/google/nftables"}},
			{ImportPath: module + "/internal/testbed/netns", Imports: []string{"os/exec"}}}, ""},
		{"liqonet runs nft", []pkg{relay, {ImportPath: module + "/internal/dataplane/liqonet", Imports: []string{"os/exec"}}}, module + "/internal/dataplane/liqonet imports os/exec"},
		{"main runs something", []pkg{{Name: "main", ImportPath: productMain, Imports: []string{"os/exec"}}}, productMain + " imports os/exec"},
		{"no relay", []pkg{{ImportPath: module + "/internal/dataplane/liqonet"}}, "not found"},
	} {
		got := execViolations(tc.pkgs)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: violations %v, want none", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: violations %v, want one containing %q", tc.name, got, tc.want)
		}
	}
}
