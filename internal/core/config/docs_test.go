package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// notConfigurable lists the fields of Health's settings types that the YAML
// does not set, with the reason. Every other leaf field is a setting.
var notConfigurable = map[string]string{
	"LossWindow": "the loss estimate's window is fixed at health.DefaultLossWindow",
}

// healthSetting is one configurable leaf field of Health.
type healthSetting struct {
	// yaml is its path in the health block, like "interval" or
	// "dampening.reuse": the Go field names in lowerCamelCase.
	yaml  string
	index []int // for reflect.Value.FieldByIndex on a Health
}

// healthSettings lists the configurable leaf fields of Health, walking the
// embedded settings types of internal/core/health and internal/core/failover.
func healthSettings() []healthSetting {
	var out []healthSetting
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			switch {
			case f.Anonymous:
				walk(f.Type, prefix, idx)
			case notConfigurable[f.Name] != "":
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+lowerCamel(f.Name)+".", idx)
			default:
				out = append(out, healthSetting{yaml: prefix + lowerCamel(f.Name), index: idx})
			}
		}
	}
	walk(reflect.TypeFor[Health](), "", nil)
	return out
}

func lowerCamel(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// healthYAML returns a flow mapping setting the health field at yaml path
// p (like "dampening.reuse") to value.
func healthYAML(p, value string) string {
	parts := strings.Split(p, ".")
	s := value
	for i := len(parts) - 1; i >= 0; i-- {
		s = "{" + parts[i] + ": " + s + "}"
	}
	return s
}

// docDefault is one row of a defaults table in the docs.
type docDefault struct {
	where string // file:line
	yaml  string // the setting's path in the health block
	value string // the documented default, as YAML
}

// spacedUnit matches a duration written with a space, like "100 ms".
var spacedUnit = regexp.MustCompile(`^([0-9.]+) (ns|us|µs|ms|s|m|h)$`)

// docDefaults reads the tables under the given headings of a markdown file
// (heading line -> prefix of the settings in its table, like "dampening.")
// and returns each row's setting and default; tables without a default
// column are skipped. It fails the test when a heading has no defaults
// table, so that a renamed heading cannot silently drop the check.
func docDefaults(t *testing.T, file string, sections map[string]string) []docDefault {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const noDefault = -2 // col in a table without a default column
	var out []docDefault
	found := map[string]int{}
	heading, col := "", -1
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			heading, col = strings.TrimSpace(line), -1
			continue
		}
		prefix, ok := sections[heading]
		if !ok {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			col = -1 // a table ends at its first non-table line
			continue
		}
		cells := strings.Split(strings.ReplaceAll(strings.Trim(line, "| "), `\|`, "/"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if col == -1 { // the header row
			col = noDefault
			for j, c := range cells {
				if strings.EqualFold(c, "default") {
					col = j
				}
			}
			continue
		}
		if col == noDefault || strings.HasPrefix(cells[0], "---") || len(cells) <= col {
			continue
		}
		name := strings.Trim(cells[0], "`")
		value := strings.Trim(cells[col], "`")
		if m := spacedUnit.FindStringSubmatch(value); m != nil {
			value = m[1] + m[2]
		}
		found[heading]++
		out = append(out, docDefault{where: fmt.Sprintf("%s:%d", file, i+1), yaml: prefix + name, value: value})
	}
	for h := range sections {
		if found[h] == 0 {
			t.Errorf("%s: no defaults table under %q (was the heading renamed?)", file, h)
		}
	}
	return out
}

// TestDocumentedDefaultsAreInForce: the defaults tables of docs/config.md
// and docs/failover.md name every health setting, and each documented
// default, written into a configuration, changes nothing: it is the default
// in force. So the docs and the code cannot drift apart.
func TestDocumentedDefaultsAreInForce(t *testing.T) {
	docs := map[string]map[string]string{
		"../../../docs/config.md": {
			"## Health":       "",
			"### `dampening`": "dampening.",
		},
		"../../../docs/failover.md": {
			"### Probing schedule":          "",
			"### Rules":                     "",
			"### Flap dampening (RFC 2439)": "dampening.",
			"## Redundant sending":          "",
		},
	}
	settings := healthSettings()
	def := reflect.ValueOf(DefaultHealth())
	for file, sections := range docs {
		documented := map[string]bool{}
		for _, d := range docDefaults(t, file, sections) {
			if hasPrefixSetting(settings, d.yaml+".") {
				continue // a block such as dampening, documented in its own table
			}
			documented[d.yaml] = true
			doc := head + "health: " + healthYAML(d.yaml, d.value) + "\n" + strings.TrimPrefix(onePeer, head)
			c, err := Parse([]byte(expand(doc)))
			if err != nil {
				t.Errorf("%s: %s documented as %q, which does not parse:\n%v", d.where, d.yaml, d.value, err)
				continue
			}
			got := reflect.ValueOf(c.Health)
			for _, s := range settings {
				if g, w := got.FieldByIndex(s.index), def.FieldByIndex(s.index); !g.Equal(w) {
					if s.yaml == d.yaml {
						t.Errorf("%s: %s is documented as %s, but the default in force is %v", d.where, d.yaml, d.value, w)
					} else {
						t.Errorf("%s: setting %s to its documented default %s changed %s from %v to %v", d.where, d.yaml, d.value, s.yaml, w, g)
					}
				}
			}
		}
		for _, s := range settings {
			if !documented[s.yaml] {
				t.Errorf("%s: health setting %s is not in the defaults tables", file, s.yaml)
			}
		}
	}
}

func hasPrefixSetting(settings []healthSetting, prefix string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.yaml, prefix) {
			return true
		}
	}
	return false
}
