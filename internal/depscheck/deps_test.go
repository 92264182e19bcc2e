// Package depscheck enforces which package may import which: the pure
// packages (listed in pure: the core under internal/core, the simulator,
// the WAN emulator's model) stay free of I/O and heavy dependencies,
// gVisor stays behind internal/dataplane/netstack, client-go behind the
// Kubernetes packages (internal/kube), where each side of the federation
// uses only its own packages and the shared ones, and the Kubernetes
// packages keep off the admin HTTP package (kubeadmin_test.go). It also
// keeps one product binary, cmd/relay, with test, perf and build tools as
// their own mains under perf/, test/ and build/.
package depscheck

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/liqo-relay/relay"

// pure lists the packages that must stay pure: no sockets, files, clocks,
// goroutines, gVisor, wireguard-go or client-go.
var pure = []string{
	module + "/internal/core/config",
	module + "/internal/core/engine",
	module + "/internal/core/failover",
	module + "/internal/testbed/sim",
	module + "/internal/core/health",
	module + "/internal/core/keys",
	module + "/internal/core/packet",
	module + "/perf/wanem",
	module + "/internal/core/refresh",
	module + "/internal/core/status",
}

// pureThirdParty are the only non-standard imports a pure package may use:
// YAML decoding for config, and Curve25519/BLAKE2s for keys and probe MACs.
var pureThirdParty = []string{"go.yaml.in/yaml/v3", "golang.org/x/crypto/"}

// forbiddenDirect may not be imported directly by a pure package.
var forbiddenDirect = []string{"net", "os", "os/exec", "syscall", "log", "net/http", "unsafe"}

// forbiddenAnywhere may not be reached, even transitively, by a pure package.
var forbiddenAnywhere = []string{"gvisor.dev/", "golang.zx2c4.com/wireguard", "k8s.io/", "sigs.k8s.io/",
	module + "/api/", "github.com/vishvananda/", "github.com/prometheus/"}

// confined maps a dependency prefix to the package prefixes allowed to import it directly.
var confined = map[string][]string{
	"gvisor.dev/": {module + "/internal/dataplane/netstack"},
	// Kubernetes stays in the controllers (internal/kube/...), the API types
	// (api/, apimachinery only) and test tooling that drives real API
	// servers: the relay's core and shells never see it.
	"k8s.io/client-go":     {module + "/internal/kube/", module + "/test/"},
	"k8s.io/api/":          {module + "/internal/kube/", module + "/test/"},
	"k8s.io/apimachinery/": {module + "/internal/kube/", module + "/api/", module + "/test/"},
	"sigs.k8s.io/":         {module + "/internal/kube/", module + "/test/"},
	module + "/api/":       {module + "/internal/kube/", module + "/test/", module + "/api/"},
	// The kernel shells, and the real-Liqo lab's load balancer (routes in
	// the lab's underlay router).
	"github.com/vishvananda/netlink": {module + "/internal/dataplane/netlink", module + "/internal/dataplane/liqonet", module + "/internal/testbed/netns", module + "/test/liqo/labservices"},
	// nftables over netlink: the relay programs its Liqo table without the
	// nft binary (the image is scratch).
	"github.com/google/nftables": {module + "/internal/dataplane/liqonet"},
	// The image builder (make image) is build tooling: the relay never
	// links it.
	"github.com/google/go-containerregistry": {module + "/build/"},
	// DNS wire format stays in the resolver and the responder, and the
	// real-Liqo lab's cluster DNS (test tooling).
	"github.com/miekg/dns": {module + "/internal/resolver", module + "/internal/control/dnsserver", module + "/test/liqo/labservices"},
}

type pkg struct {
	Name         string
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// isStd reports whether an import path is in the standard library (no dot
// in its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func isPure(path string) bool {
	for _, p := range pure {
		if path == p {
			return true
		}
	}
	return false
}

func TestPurePackagesStayPure(t *testing.T) {
	found := 0
	for _, p := range listPackages(t) {
		if !isPure(p.ImportPath) {
			continue
		}
		found++
		for _, imp := range p.Imports {
			for _, f := range forbiddenDirect {
				if imp == f {
					t.Errorf("%s imports %q: pure packages do no I/O (take values and time as inputs)", p.ImportPath, imp)
				}
			}
			if !isStd(imp) && !isPure(imp) && !hasPrefixAny(imp, pureThirdParty) {
				t.Errorf("%s imports %q: a pure package imports only the standard library, other pure packages and %v", p.ImportPath, imp, pureThirdParty)
			}
		}
		for _, dep := range p.Deps {
			if hasPrefixAny(dep, forbiddenAnywhere) {
				t.Errorf("%s depends on %s: keep heavy dependencies out of the pure core", p.ImportPath, dep)
			}
		}
		checkNoClockOrGoroutines(t, p)
	}
	if found == 0 {
		t.Fatal("none of the pure packages was found: is the list stale?")
	}
}

// checkNoClockOrGoroutines parses the non-test files of a pure package and
// rejects wall-clock reads, sleeps, timers and go statements.
func checkNoClockOrGoroutines(t *testing.T, p pkg) {
	banned := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true, "After": true}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		file := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", file, err)
		}
		timeName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"time"` {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement in pure package %s", fset.Position(x.Pos()), p.ImportPath)
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && banned[x.Sel.Name] {
					t.Errorf("%s: time.%s in pure package %s: take now as an input", fset.Position(x.Pos()), x.Sel.Name, p.ImportPath)
				}
			}
			return true
		})
	}
}

func TestConfinedDependencies(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			for dep, allowed := range confined {
				if strings.HasPrefix(imp, dep) && !hasPrefixAny(p.ImportPath, allowed) {
					t.Errorf("%s imports %s; only %v may", p.ImportPath, imp, allowed)
				}
			}
		}
	}
}

// productMain is the one product binary. Test, perf and build tools are
// mains too, but live under toolRoots and are built only by the targets
// that use them (perf/perf.mk, perf/testbed.sh, make image), never into
// the relay image.
const productMain = module + "/cmd/relay"

var toolRoots = []string{module + "/perf/", module + "/test/", module + "/build/"}

// testTooling may not be reached from the product binary: the test beds
// (internal/testbed), perf and test tooling (the WAN emulator among them)
// and the image builder (build/).
var testTooling = []string{module + "/internal/testbed/", module + "/perf/", module + "/test/", module + "/build/"}

// mainViolations returns one message per package that breaks the binary
// rules: a main outside cmd/relay, perf/, test/ and build/, or a product binary
// that depends on test tooling.
func mainViolations(pkgs []pkg) []string {
	var bad []string
	sawProduct := false
	for _, p := range pkgs {
		if p.ImportPath == productMain {
			sawProduct = true
			for _, dep := range p.Deps {
				if hasPrefixAny(dep, testTooling) {
					bad = append(bad, productMain+" depends on "+dep+": test, perf and build tooling gets its own main under perf/, test/ or build/")
				}
			}
			continue
		}
		if p.Name == "main" && !hasPrefixAny(p.ImportPath, toolRoots) {
			bad = append(bad, p.ImportPath+": a main outside "+productMain+", perf/, test/ and build/ (cmd/relay is the one product binary)")
		}
	}
	if !sawProduct {
		bad = append(bad, productMain+" not found")
	}
	return bad
}

func TestBinaries(t *testing.T) {
	for _, msg := range mainViolations(listPackages(t)) {
		t.Error(msg)
	}
}

// TestBinaryRulesCatch proves the rules reject what they must, on
// synthetic package lists.
func TestBinaryRulesCatch(t *testing.T) {
	relay := pkg{Name: "main", ImportPath: productMain, Deps: []string{"fmt", module + "/internal/agent"}}
	tool := pkg{Name: "main", ImportPath: module + "/perf/cmd/wanem", Deps: []string{module + "/perf/wanem/bridge"}}
	testTool := pkg{Name: "main", ImportPath: module + "/test/tools/x"}
	buildTool := pkg{Name: "main", ImportPath: module + "/build/cmd/image", Deps: []string{module + "/build/image"}}
	for _, tc := range []struct {
		name string
		pkgs []pkg
		want string // substring of the one expected violation; "" for none
	}{
		{"allowed", []pkg{relay, tool, testTool, buildTool, {Name: "agent", ImportPath: module + "/internal/agent"}}, ""},
		{"second main under cmd", []pkg{relay, {Name: "main", ImportPath: module + "/cmd/wanem"}}, module + "/cmd/wanem: a main outside"},
		{"main under internal", []pkg{relay, {Name: "main", ImportPath: module + "/internal/tool"}}, module + "/internal/tool: a main outside"},
		{"relay reaches wanem", []pkg{{Name: "main", ImportPath: productMain, Deps: []string{module + "/perf/wanem"}}}, "depends on " + module + "/perf/wanem"},
		{"relay reaches the image builder", []pkg{{Name: "main", ImportPath: productMain, Deps: []string{module + "/build/image"}}}, "depends on " + module + "/build/image"},
		{"main beside build/", []pkg{relay, {Name: "main", ImportPath: module + "/builder"}}, module + "/builder: a main outside"},
		{"relay reaches the simulator", []pkg{{Name: "main", ImportPath: productMain, Deps: []string{module + "/internal/testbed/sim"}}}, "depends on " + module + "/internal/testbed/sim"},
		{"relay reaches the bridge", []pkg{{Name: "main", ImportPath: productMain, Deps: []string{module + "/perf/wanem/bridge"}}}, "depends on " + module + "/perf/wanem/bridge"},
		{"no relay", []pkg{tool}, "not found"},
	} {
		got := mainViolations(tc.pkgs)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected violations %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: got %q, want one violation containing %q", tc.name, got, tc.want)
		}
	}
}

// kubeSides are the roots of what each side of the federation runs: the
// relay's loops in a provider (inside relay run), the operator in the
// consumer (relay operator) and the injection webhook in a provider
// (relay inject). The other packages under kubeRoot (the client, keysecret,
// liqo) are shared by all sides.
var kubeSides = []string{module + "/internal/kube/provider", module + "/internal/kube/consumer", module + "/internal/kube/webhook"}

const kubeRoot = module + "/internal/kube/"

// kubeSide returns the side root path is under, "" for a shared package
// and for a package outside kubeRoot.
func kubeSide(path string) string {
	for _, s := range kubeSides {
		if path == s || strings.HasPrefix(path, s+"/") {
			return s
		}
	}
	return ""
}

// kubeSideViolations returns one message per package under kubeRoot that
// reaches another side's package: a side's code, and its tests, use only
// its own packages and the shared ones, and a shared package no side's,
// so that the layout says which cluster runs what. cmd/relay and test/
// wire the sides together and may reach any.
func kubeSideViolations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		if !strings.HasPrefix(p.ImportPath, kubeRoot) {
			continue
		}
		own := kubeSide(p.ImportPath)
		reached := map[string]string{}
		for _, d := range p.Deps {
			reached[d] = "depends on"
		}
		for _, d := range append(append([]string(nil), p.TestImports...), p.XTestImports...) {
			if _, ok := reached[d]; !ok {
				reached[d] = "tests import"
			}
		}
		for d, how := range reached {
			if s := kubeSide(d); s != "" && s != own {
				where := "shared package " + p.ImportPath
				if own != "" {
					where = p.ImportPath + " (side " + strings.TrimPrefix(own, kubeRoot) + ")"
				}
				bad = append(bad, where+" "+how+" "+d+": a side uses only its own and the shared packages under "+kubeRoot)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

func TestKubeSidesStayApart(t *testing.T) {
	for _, msg := range kubeSideViolations(listPackages(t)) {
		t.Error(msg)
	}
}

// TestKubeSideRulesCatch proves the side rules reject what they must, on
// synthetic package lists.
func TestKubeSideRulesCatch(t *testing.T) {
	shared := module + "/internal/kube/client"
	prov := module + "/internal/kube/provider"
	peersync := module + "/internal/kube/provider/peersync"
	connect := module + "/internal/kube/consumer/connect"
	webhook := module + "/internal/kube/webhook"
	for _, tc := range []struct {
		name string
		p    pkg
		want string // substring of the one expected violation; "" for none
	}{
		{"own side and shared", pkg{ImportPath: prov, Deps: []string{peersync, shared, "fmt"}}, ""},
		{"the binary wires all sides", pkg{ImportPath: productMain, Deps: []string{prov, connect, webhook}}, ""},
		{"a prefix is not a side", pkg{ImportPath: module + "/internal/kube/providers", Deps: []string{shared}}, ""},
		{"provider reaches the consumer", pkg{ImportPath: peersync, Deps: []string{connect}}, "(side provider) depends on " + connect},
		{"consumer reaches the provider", pkg{ImportPath: connect, Deps: []string{prov}}, "(side consumer) depends on " + prov},
		{"webhook's test imports the provider", pkg{ImportPath: webhook, XTestImports: []string{peersync}}, "(side webhook) tests import " + peersync},
		{"shared reaches a side", pkg{ImportPath: shared, Deps: []string{webhook}}, "shared package " + shared + " depends on " + webhook},
	} {
		got := kubeSideViolations([]pkg{tc.p})
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected violations %q", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: got %q, want one violation containing %q", tc.name, got, tc.want)
		}
	}
}
