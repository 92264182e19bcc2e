package admin_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// now is the fixed "current time" of every fixture.
var now = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func ago(d time.Duration) status.Time { return status.At(now.Add(-d)) }

// sampleStatus covers every field and every path state: a healthy peer
// with a dampened backup path (NAT-observed endpoint, bias, penalty), and
// an unreachable peer that never completed a handshake.
func sampleStatus() status.Status {
	return status.Status{
		Name: "provider-a", Version: "v0.3.1", Mode: "tun",
		PublicKey:  "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
		ListenPort: 51900, UptimeSeconds: 3725.5, ConfigGeneration: 2,
		Peers: []status.PeerStatus{
			{
				Name: "provider-b", PublicKey: "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=",
				ActivePath: "direct", Reachable: true, Prefixes: []string{"10.72.0.0/16"},
				LastHandshake: ago(42 * time.Second), RxBytes: 1536000, TxBytes: 2048,
				Paths: []status.PathStatus{
					{Name: "direct", Endpoint: "192.0.2.10:51900", Address: "192.0.2.10:51900", Observed: "192.0.2.10:51900",
						State: status.PathUp, RTTMs: 10.24, JitterMs: 0.31, Loss: 0, LastChange: ago(12 * time.Second)},
					{Name: "consumer", Endpoint: "gw-b.example.com:51900", Address: "198.51.100.7:51900", Observed: "203.0.113.9:40112",
						State: status.PathDampened, RTTMs: 31.5, JitterMs: 2.05, Loss: 0.05,
						LastChange: ago(3 * time.Second), Bias: 5, Penalty: 1823.4},
				},
			},
			{
				Name: "provider-c", PublicKey: "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=",
				Reachable: false, Prefixes: []string{"10.80.0.0/16", "10.81.0.0/16"},
				Paths: []status.PathStatus{
					{Name: "direct", Endpoint: "192.0.2.20:51900", State: status.PathDown,
						RTTMs: 48, Loss: 1, LastChange: ago(5*time.Minute + 7*time.Second)},
					{Name: "consumer", Endpoint: "198.51.100.7:51901", State: status.PathDown,
						Loss: 1, LastChange: ago(2*time.Hour + 30*time.Minute)},
					{Name: "lb", Endpoint: "gw-c.example.com:51900", State: status.PathUnresolved,
						DNSError: `looking up "gw-c.example.com": A gw-c.example.com. @10.96.0.10:53: server failure: SERVFAIL`},
					{Name: "lb2", Endpoint: "gw-c2.example.com:51900", State: status.PathResolving},
				},
			},
		},
		Events: []status.Event{
			{At: ago(3 * time.Minute), Peer: "provider-c", From: "direct", To: "consumer", Reason: "down"},
			{At: ago(2 * time.Minute), Peer: "provider-c", From: "consumer", To: "", Reason: "down"},
			{At: ago(12*time.Second + 250*time.Millisecond), Peer: "provider-b", From: "consumer", To: "direct", Reason: "better"},
		},
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
