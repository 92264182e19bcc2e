package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// dnsServer in Kubernetes mode without --consumer-cluster-id reads the
// consumer from the relay's tenant namespace; a namespace that is not one
// stops the relay with an error naming the label and the flag (real API
// server: the relay connects before it reads the namespace).
func TestKubeDNSConsumerFromNamespace(t *testing.T) {
	c := k8stest.Start(t, "relaycmd", "")
	c.Kubectl(t, "create", "namespace", "plain")
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
	code, _, stderr := runCmd(t, "", "run", "--config", path, "--kubeconfig", c.Kubeconfig, "--namespace", "plain")
	if code == 0 || !strings.Contains(stderr, "liqo.io/tenant-namespace") || !strings.Contains(stderr, "--consumer-cluster-id") {
		t.Fatalf("exit %d, stderr:\n%s\nwant an error naming the tenant namespace label and --consumer-cluster-id", code, stderr)
	}
}

func TestParseDNSListen(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "", want: "[]"},
		{in: "10.244.1.7:5353", want: "[10.244.1.7:5353]"},
		{in: "10.244.1.7:5353, [fd00::7]:5353", want: "[10.244.1.7:5353 [fd00::7]:5353]"},
		{in: "0.0.0.0:5353", err: "--dns-listen[0]: 0.0.0.0:5353 listens on every address"},
		{in: "10.0.0.1:53,10.0.0.1:53", err: "--dns-listen[1]: 10.0.0.1:53 is listed twice"},
		{in: ":5353", err: `--dns-listen[0]: ":5353" is not IP:port`},
		{in: "$(POD_IP):5353", err: "is not IP:port"},
	} {
		got, err := parseDNSListen(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("%q: %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
