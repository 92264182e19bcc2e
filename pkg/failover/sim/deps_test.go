package sim

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPureImports keeps this package pure: no sockets, files, clocks,
// goroutine-heavy runtimes or heavy dependencies (see docs/protocol.md and
// STYLE.md). Only the standard packages and x/crypto parts listed here may
// be imported by non-test files.
func TestPureImports(t *testing.T) {
	allowed := map[string]bool{
		"bytes": true, "crypto/subtle": true, "encoding/binary": true, "errors": true,
		"fmt": true, "hash": true, "math": true, "math/bits": true, "math/rand/v2": true,
		"sync": true, "time": true, "container/heap": true,
		"github.com/liqo-relay/relay/pkg/failover": true, "github.com/liqo-relay/relay/pkg/health": true, "net/netip": true, "slices": true, "sort": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[p] {
				t.Errorf("%s imports %q: not allowed in a pure package", f, p)
			}
		}
	}
}
