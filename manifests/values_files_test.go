package manifests

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/webhook"
)

// valuesDir holds values files the chart must take (good/) or refuse
// (bad/, each with a "# refused: KEY" line naming the value at fault).
const valuesDir = "testdata/values"

func valuesFiles(t *testing.T, kind string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(valuesDir, kind, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files in %s/%s (%v)", valuesDir, kind, err)
	}
	return files
}

// fileVariant installs the chart with one values file, as a release
// named after it.
func fileVariant(path string) variant {
	return variant{name: strings.TrimSuffix(filepath.Base(path), ".yaml"), files: []string{path}}
}

// goodVariants are the chart's defaults, each good values file, and the
// template way's example values.
func goodVariants(t *testing.T) []variant {
	t.Helper()
	vs := []variant{{name: "defaults"}, fileVariant("liqo-template/tenant-values.yaml")}
	for _, f := range valuesFiles(t, "good") {
		vs = append(vs, fileVariant(f))
	}
	return vs
}

// refusedKey is the value a bad file's "# refused: KEY" line names.
func refusedKey(t *testing.T, path string) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, path)))
	for sc.Scan() {
		if key, ok := strings.CutPrefix(sc.Text(), "# refused: "); ok {
			return strings.TrimSpace(key)
		}
	}
	t.Fatalf("%s has no \"# refused: KEY\" line", path)
	return ""
}

// namesKey reports whether helm's error names key (a.b[0].c): as the
// chart's own refusals do (templates/validate.yaml: the dotted key), or as
// schema validation does (the JSON pointer /a/b/0/c; for an unknown or a
// missing key, the pointer of its object and the key quoted).
func namesKey(msg, key string) bool {
	if strings.Contains(msg, "execution error") {
		return strings.Contains(msg, key)
	}
	ptr := "/" + strings.NewReplacer(".", "/", "[", "/", "]", "").Replace(key)
	if strings.Contains(msg, "at '"+ptr+"'") {
		return true
	}
	i := strings.LastIndex(ptr, "/")
	return strings.Contains(msg, "at '"+ptr[:i]+"'") && strings.Contains(msg, "'"+ptr[i+1:]+"'")
}

// TestValuesBadFilesAreRefused: each bad values file fails to render, with
// an error that names the value its "# refused:" line gives.
func TestValuesBadFilesAreRefused(t *testing.T) {
	h := helm(t)
	for _, f := range valuesFiles(t, "bad") {
		key := refusedKey(t, f)
		_, err := fileVariant(f).template(h, chartDir)
		if err == nil {
			t.Errorf("%s renders; want it refused for %s", f, key)
		} else if !namesKey(err.Error(), key) {
			t.Errorf("%s is refused, but the error does not name %s:\n%v", f, key, err)
		}
	}
}

// TestValuesGoodFilesRender: the defaults and each good values file render
// and pass helm lint --strict, and what they give the programs parses with
// the programs' own parsers: the webhook's sidecar file, the relay's files
// of the template way.
func TestValuesGoodFilesRender(t *testing.T) {
	h := helm(t)
	for _, v := range goodVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			if out, err := v.lint(h); err != nil {
				t.Errorf("helm lint --strict: %v\n%s", err, out)
			}
			objs := decodeAll(t, v.name, v.render(t, h))
			if file := sidecarFile(objs); file != "" {
				if _, err := webhook.ParseSidecar([]byte(file)); err != nil {
					t.Errorf("the sidecar file does not parse with webhook.ParseSidecar:\n%v\n%s", err, file)
				}
			}
			for _, o := range objs {
				relay, ok := get(o, "data", "relay.yaml").(string)
				if o["kind"] != "ConfigMap" || !ok {
					continue
				}
				if _, err := config.Parse([]byte(relay)); err != nil {
					t.Errorf("the relay's file in %v does not parse with config.Parse:\n%v", get(o, "metadata", "namespace"), err)
				}
			}
		})
	}
}

// TestValuesNamesKeyCatches: namesKey tells the key at fault from another
// one in both kinds of error.
func TestValuesNamesKeyCatches(t *testing.T) {
	for _, c := range []struct {
		msg, key string
		want     bool
	}{
		{"- at '/sidecar/mode': value must be one of 'tun', 'netstack'", "sidecar.mode", true},
		{"- at '/sidecar/mode': value must be one of 'tun', 'netstack'", "sidecar.port", false},
		{"- at '/sidecar/addresses/0': does not match pattern", "sidecar.addresses[0]", true},
		{"- at '/sidecar': additional properties 'adresses' not allowed", "sidecar.adresses", true},
		{"- at '/sidecar': additional properties 'adresses' not allowed", "sidecar.exports", false},
		{"- at '': additional properties 'bogus' not allowed", "bogus", true},
		{"- at '/providerGrant/consumers/0': missing property 'clusterID'", "providerGrant.consumers[0].clusterID", true},
		{"execution error at (liqo-relay/templates/validate.yaml:7:4): inject.replicas=3 needs", "inject.replicas", true},
		{"execution error at (liqo-relay/templates/validate.yaml:7:4): inject.replicas=3 needs", "sidecar.addresses", false},
	} {
		if got := namesKey(c.msg, c.key); got != c.want {
			t.Errorf("namesKey(%q, %q) = %v, want %v", c.msg, c.key, got, c.want)
		}
	}
}
