package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dnsServer in Kubernetes mode needs the consumer's cluster ID; without it
// the relay stops before it connects, naming the flag.
func TestKubeDNSNeedsConsumer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "relay.yaml")
	doc := `name: provider-a
privateKeySecret: {name: relay-key}
mode: netstack
listenPort: 51900
addresses: [100.80.0.1/32]
dnsServer: {listen: ["127.0.0.1:0"]}
`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "", "run", "--config", path, "--kubeconfig", filepath.Join(dir, "missing.kubeconfig"))
	if code == 0 || !strings.Contains(stderr, "--consumer-cluster-id") {
		t.Fatalf("exit %d, stderr:\n%s\nwant an error naming --consumer-cluster-id", code, stderr)
	}
}
