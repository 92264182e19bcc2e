package metrics_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsListEveryMetric keeps docs/metrics.md and the registry in step:
// every relay_* family has a table row, and every table row names a real
// family.
func TestDocsListEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(relay_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}

	m := metricsWithEverySeries()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, f := range fams {
		if name := f.GetName(); strings.HasPrefix(name, "relay_") {
			registered = append(registered, name)
			if !documented[name] {
				t.Errorf("%s is not documented in docs/metrics.md", name)
			}
		}
	}
	for name := range documented {
		if !slices.Contains(registered, name) {
			t.Errorf("docs/metrics.md documents %s, which the relay does not export", name)
		}
	}
}
