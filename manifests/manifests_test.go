// Package manifests holds the Kubernetes manifests that deploy liqo-relay
// beside Liqo's gateway; its test keeps them parseable and their embedded
// relay configuration valid.
package manifests

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
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
	for _, want := range []string{"/etc/liqo-relay/relay.yaml", "secretName: liqo-relay-key", "defaultMode: 0400", "path: /readyz", "path: /healthz", "containerPort: 51900"} {
		if !bytes.Contains(tmpl, []byte(want)) {
			t.Errorf("template lacks %q", want)
		}
	}
}

// TestAdminSurface checks the split of the admin endpoints in the shipped
// manifests: admin.listen (/status, /ping) stays on loopback and is no
// container port, while the probes use the port of admin.metricsListen,
// which serves only /healthz, /readyz and /metrics.
func TestAdminSurface(t *testing.T) {
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
	cfg, err := config.Parse([]byte(cm.Data["relay.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	host, adminPort, err := net.SplitHostPort(cfg.Admin.Listen)
	if err != nil || !config.IsLoopbackHost(host) {
		t.Errorf("admin.listen %q is not on loopback", cfg.Admin.Listen)
	}
	_, metricsPort, err := net.SplitHostPort(cfg.Admin.MetricsListen)
	if err != nil {
		t.Fatalf("admin.metricsListen %q: %v", cfg.Admin.MetricsListen, err)
	}

	tmpl, err := os.ReadFile("gateway-template-with-relay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(tmpl, &doc); err != nil {
		t.Fatal(err)
	}
	relay := findContainer(doc, "relay")
	if relay == nil {
		t.Fatal("no relay container in the template")
	}
	var c struct {
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Liveness struct {
			HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
		} `yaml:"livenessProbe"`
		Readiness struct {
			HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
		} `yaml:"readinessProbe"`
	}
	b, _ := yaml.Marshal(relay)
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	ports := map[string]string{}
	for _, p := range c.Ports {
		ports[p.Name] = strconv.Itoa(p.ContainerPort)
		if ports[p.Name] == adminPort {
			t.Errorf("container port %s exposes admin.listen (%s)", p.Name, cfg.Admin.Listen)
		}
	}
	for _, probe := range []struct{ path, port string }{{c.Liveness.HTTPGet.Path, c.Liveness.HTTPGet.Port}, {c.Readiness.HTTPGet.Path, c.Readiness.HTTPGet.Port}} {
		if ports[probe.port] != metricsPort {
			t.Errorf("probe %s uses port %q (%s), want admin.metricsListen's %s", probe.path, probe.port, ports[probe.port], metricsPort)
		}
	}
}

// findContainer returns the container named name anywhere in doc.
func findContainer(doc any, name string) map[string]any {
	switch v := doc.(type) {
	case map[string]any:
		if v["name"] == name && v["image"] != nil {
			return v
		}
		for _, x := range v {
			if c := findContainer(x, name); c != nil {
				return c
			}
		}
	case []any:
		for _, x := range v {
			if c := findContainer(x, name); c != nil {
				return c
			}
		}
	}
	return nil
}
