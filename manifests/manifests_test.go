// Package manifests holds the Kubernetes manifests that deploy liqo-relay
// beside Liqo's gateway; its test keeps them parseable and their embedded
// relay configuration valid.
package manifests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/pkg/config"
)

func TestManifestsParse(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		n := 0
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			n++
			if doc["apiVersion"] == nil || doc["kind"] == nil {
				t.Errorf("%s: document %d has no apiVersion or kind", f, n)
			}
		}
	}
}

func TestEmbeddedRelayConfigIsValid(t *testing.T) {
	data, err := os.ReadFile("relay-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	text, ok := cm.Data["relay.yaml"]
	if !ok || !strings.Contains(text, "peers:") {
		t.Fatalf("relay-config.yaml has no data.relay.yaml with peers")
	}
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		t.Fatalf("embedded relay.yaml is invalid:\n%v", err)
	}
	if cfg.Mode != config.ModeTUN || len(cfg.Peers) != 1 || len(cfg.Peers[0].Paths) != 2 {
		t.Errorf("unexpected embedded config: mode %s, %d peers", cfg.Mode, len(cfg.Peers))
	}
}

func TestTemplateMountsWhatTheConfigReads(t *testing.T) {
	tmpl, err := os.ReadFile("gateway-template-with-relay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/etc/liqo-relay/relay.yaml", "secretName: liqo-relay-key", "path: /readyz", "path: /healthz", "containerPort: 51900"} {
		if !bytes.Contains(tmpl, []byte(want)) {
			t.Errorf("template lacks %q", want)
		}
	}
}
