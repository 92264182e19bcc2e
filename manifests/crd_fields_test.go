package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// crd is the part of a CustomResourceDefinition these tests read.
type crd struct {
	Spec struct {
		Names struct {
			Kind       string   `yaml:"kind"`
			ShortNames []string `yaml:"shortNames"`
		} `yaml:"names"`
		Versions []struct {
			Name    string   `yaml:"name"`
			Columns []column `yaml:"additionalPrinterColumns"`
			Schema  struct {
				OpenAPIV3Schema *schema `yaml:"openAPIV3Schema"`
			} `yaml:"schema"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

// column is a printer column of `kubectl get`.
type column struct {
	Name     string `yaml:"name"`
	JSONPath string `yaml:"jsonPath"`
}

// schema is an OpenAPI schema's description and nested fields.
type schema struct {
	Description string             `yaml:"description"`
	Properties  map[string]*schema `yaml:"properties"`
	Items       *schema            `yaml:"items"`
}

// readCRDs reads the generated CRDs.
func readCRDs(t *testing.T) map[string]*crd {
	t.Helper()
	files, err := filepath.Glob("crds/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in manifests/crds: %v", err)
	}
	out := map[string]*crd{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c crd
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[c.Spec.Names.Kind] = &c
	}
	return out
}

// TestCRDFieldsDescribed: every field of every CRD has a description, so
// `kubectl explain` answers for each one. apiVersion, kind and metadata
// are Kubernetes' own.
func TestCRDFieldsDescribed(t *testing.T) {
	for kind, c := range readCRDs(t) {
		for _, v := range c.Spec.Versions {
			var missing []string
			undescribed(v.Schema.OpenAPIV3Schema, kind, &missing)
			if len(missing) > 0 {
				t.Errorf("%s %s: fields without a description (a comment on the Go field in api/): %s",
					kind, v.Name, strings.Join(missing, ", "))
			}
		}
	}
}

// undescribed appends the fields under s, at path, that have no
// description.
func undescribed(s *schema, path string, out *[]string) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if path == strings.SplitN(path, ".", 2)[0] && slices.Contains([]string{"apiVersion", "kind", "metadata"}, name) {
			continue
		}
		if strings.TrimSpace(p.Description) == "" {
			*out = append(*out, path+"."+name)
		}
		undescribed(p, path+"."+name, out)
	}
	if s.Items != nil {
		undescribed(s.Items, path+"[]", out)
	}
	slices.Sort(*out)
}

// TestCRDNamesAndColumns: each kind has a short name, and `kubectl get`
// shows whether each RelayPeer and Relay is ready.
func TestCRDNamesAndColumns(t *testing.T) {
	crds := readCRDs(t)
	for _, kind := range []string{"Relay", "RelayPeer", "ForeignClusterConnection"} {
		c, ok := crds[kind]
		if !ok {
			t.Fatalf("no CRD for %s", kind)
		}
		if len(c.Spec.Names.ShortNames) == 0 {
			t.Errorf("%s has no short name", kind)
		}
	}
	for kind, want := range map[string]string{
		"RelayPeer": `.status.conditions[?(@.type=="Ready")].status`,
		"Relay":     ".status.ready",
	} {
		cols := crds[kind].Spec.Versions[0].Columns
		if !slices.ContainsFunc(cols, func(c column) bool {
			return c.Name == "Ready" && c.JSONPath == want
		}) {
			t.Errorf("%s: no Ready column on %s: %+v", kind, want, cols)
		}
	}
}
