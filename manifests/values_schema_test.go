package manifests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// openMaps are the objects of values.schema.json that may hold any key,
// by their path in the values (a list's items as []): maps of labels,
// annotations, selectors and resource quantities, the parts of Kubernetes
// types the chart passes through as they are, and the parts of the
// relay's file that the relay checks itself. Every other object of the
// schema must say additionalProperties: false.
var openMaps = []string{
	"global",
	"operator.resources.requests", "operator.resources.limits", "operator.nodeSelector", "operator.podAnnotations",
	"operator.affinity.nodeAffinity", "operator.affinity.podAffinity", "operator.affinity.podAntiAffinity",
	"inject.resources.requests", "inject.resources.limits", "inject.nodeSelector", "inject.podAnnotations",
	"inject.affinity.nodeAffinity", "inject.affinity.podAffinity", "inject.affinity.podAntiAffinity",
	"sidecar.resources.requests", "sidecar.resources.limits", "sidecar.service.annotations",
	"sidecar.networkPolicy.metricsFrom[].podSelector.matchLabels", "sidecar.networkPolicy.metricsFrom[].namespaceSelector.matchLabels",
	"networkPolicy.metricsFrom[].podSelector.matchLabels", "networkPolicy.metricsFrom[].namespaceSelector.matchLabels",
	"serviceMonitor.labels",
	"liqoTemplate.tenants[].config.privateKeySecret", "liqoTemplate.tenants[].config.tun", "liqoTemplate.tenants[].config.netstack",
	"liqoTemplate.tenants[].config.liqo", "liqoTemplate.tenants[].config.dns", "liqoTemplate.tenants[].config.dnsServer",
	"liqoTemplate.tenants[].config.admin",
}

// valuesSchema is a node of values.schema.json, with the document it belongs
// to for its $refs.
type valuesSchema struct {
	node map[string]any
	root map[string]any
}

func loadSchema(t *testing.T) valuesSchema {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(chartDir, "values.schema.json")), &root); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	return valuesSchema{root, root}
}

// resolve follows $ref (#/definitions/x) and merges allOf, the two ways
// the schema composes: the result's properties are all of them.
func (s valuesSchema) resolve() valuesSchema {
	n := s.node
	for hops := 0; n["$ref"] != nil && hops < 10; hops++ {
		ref, _ := n["$ref"].(string)
		def, _ := get(s.root, "definitions", strings.TrimPrefix(ref, "#/definitions/")).(map[string]any)
		n = def
	}
	all, _ := n["allOf"].([]any)
	if len(all) == 0 {
		return valuesSchema{n, s.root}
	}
	merged := map[string]any{}
	props := map[string]any{}
	own, _ := n["properties"].(map[string]any)
	for k, v := range n {
		merged[k] = v
	}
	for k, v := range own {
		props[k] = v
	}
	for _, part := range all {
		p, _ := part.(map[string]any)
		r := valuesSchema{p, s.root}.resolve()
		for k, v := range r.node {
			if k == "properties" {
				for pk, pv := range v.(map[string]any) {
					props[pk] = pv
				}
			} else if _, ok := merged[k]; !ok {
				merged[k] = v
			}
		}
	}
	if len(props) > 0 {
		merged["properties"] = props
	}
	delete(merged, "allOf")
	return valuesSchema{merged, s.root}
}

func (s valuesSchema) child(key string) (valuesSchema, bool) {
	p, ok := get(s.node, "properties", key).(map[string]any)
	if ok {
		return valuesSchema{p, s.root}.resolve(), true
	}
	if ap, ok := s.node["additionalProperties"].(map[string]any); ok {
		return valuesSchema{ap, s.root}.resolve(), true
	}
	return valuesSchema{}, false
}

// types are the JSON types the node admits, directly or through anyOf.
func (s valuesSchema) types() []string {
	var out []string
	switch t := s.node["type"].(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, x := range t {
			out = append(out, x.(string))
		}
	}
	alts, _ := s.node["anyOf"].([]any)
	for _, a := range alts {
		out = append(out, valuesSchema{a.(map[string]any), s.root}.resolve().types()...)
	}
	return out
}

// jsonType is the JSON Schema type of a decoded YAML value.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int64, uint64:
		return "integer"
	case float64:
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func admits(types []string, v any) bool {
	jt := jsonType(v)
	return len(types) == 0 || slices.Contains(types, jt) || (jt == "integer" && slices.Contains(types, "number"))
}

// uncovered walks a values tree beside the schema and returns every
// value the schema does not declare, or declares with another type.
func uncovered(s valuesSchema, path string, v any) []string {
	var out []string
	if !admits(s.types(), v) {
		out = append(out, fmt.Sprintf("%s: a %s, the schema wants %v", path, jsonType(v), s.types()))
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := strings.TrimPrefix(path+"."+k, ".")
			c, ok := s.child(k)
			if !ok {
				out = append(out, p+": not in values.schema.json")
				continue
			}
			out = append(out, uncovered(c, p, v[k])...)
		}
	case []any:
		items, ok := s.node["items"].(map[string]any)
		for i, e := range v {
			p := fmt.Sprintf("%s[%d]", path, i)
			if !ok {
				out = append(out, p+": the schema has no items for "+path)
				continue
			}
			out = append(out, uncovered(valuesSchema{items, s.root}.resolve(), p, e)...)
		}
	}
	return out
}

// unclosed walks the schema and returns the paths of objects that accept
// unknown keys without being named in open.
func unclosed(s valuesSchema, path string, open []string) []string {
	var out []string
	props, _ := s.node["properties"].(map[string]any)
	isObject := slices.Contains(s.types(), "object") || props != nil
	if isObject && s.node["additionalProperties"] != false && !slices.Contains(open, path) {
		out = append(out, path)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c, _ := s.child(k)
		out = append(out, unclosed(c, strings.TrimPrefix(path+"."+k, "."), open)...)
	}
	if items, ok := s.node["items"].(map[string]any); ok {
		out = append(out, unclosed(valuesSchema{items, s.root}.resolve(), path+"[]", open)...)
	}
	return out
}

func chartValues(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal(readFile(t, filepath.Join(chartDir, "values.yaml")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestValuesSchemaCoversEveryValue walks values.yaml and the schema
// together: a value that the schema does not declare (a new value without
// its schema) or declares with another type fails.
func TestValuesSchemaCoversEveryValue(t *testing.T) {
	for _, u := range uncovered(loadSchema(t), "", chartValues(t)) {
		t.Errorf("values.yaml %s", u)
	}
}

// TestValuesSchemaIsClosed: every object of the schema refuses unknown
// keys (a misspelt value is an error, not ignored), but the open maps.
func TestValuesSchemaIsClosed(t *testing.T) {
	s := loadSchema(t)
	for _, p := range unclosed(s, "", openMaps) {
		t.Errorf("values.schema.json: %s accepts any key: add additionalProperties: false, or name it in openMaps", p)
	}
	// Each open map is one, so the list does not outlive the schema.
	for _, p := range openMaps {
		if len(unclosed(s, "", slices.DeleteFunc(slices.Clone(openMaps), func(o string) bool { return o == p }))) == 0 {
			t.Errorf("openMaps names %s, which is not an open object of the schema: drop it", p)
		}
	}
}

// TestValuesSchemaChecksCatch: the walks find a value missing from the
// schema, a value of the wrong type, and an object left open.
func TestValuesSchemaChecksCatch(t *testing.T) {
	s := loadSchema(t)
	v := chartValues(t)
	v["newValue"] = 1
	v["sidecar"].(map[string]any)["probes"].(map[string]any)["timeoutSeconds"] = 2
	v["operator"].(map[string]any)["replicas"] = "1"
	v["sidecar"].(map[string]any)["exports"] = []any{map[string]any{"cidr": "10.0.0.0/8"}}
	got := strings.Join(uncovered(s, "", v), "\n")
	for _, want := range []string{"newValue: not in", "sidecar.probes.timeoutSeconds: not in", "operator.replicas: a string", "sidecar.exports[0]: a object"} {
		if !strings.Contains(got, want) {
			t.Errorf("uncovered does not report %q:\n%s", want, got)
		}
	}
	get(s.root, "properties", "sidecar", "properties", "probes").(map[string]any)["additionalProperties"] = true
	if got := unclosed(s, "", openMaps); !slices.Equal(got, []string{"sidecar.probes"}) {
		t.Errorf("unclosed = %v, want [sidecar.probes]", got)
	}
}
