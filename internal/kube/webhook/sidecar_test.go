package webhook

import (
	"strings"
	"testing"
)

func TestParseSidecarDefaults(t *testing.T) {
	s, err := ParseSidecar([]byte("image: r:1\naddresses: [100.80.0.1/32]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ModeTUN || s.Port != DefaultPort || s.AdminPort != DefaultAdmin || s.MetricsPort != DefaultMetrics ||
		s.KeySecret != DefaultKeySecret || s.LiqoNamespace != DefaultLiqoNS || s.RelayClusterRole != DefaultRole ||
		s.Service.Type != "LoadBalancer" || s.Service.ExternalTrafficPolicy != "Local" || !s.NetworkPolicyEnabled() ||
		s.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("defaults: %+v", s)
	}
}

func TestParseSidecarErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"addresses: [100.80.0.1/32]", []string{"image: required"}},
		{"image: r:1", []string{"addresses: required"}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nmode: kernel", []string{`mode: "kernel" is not tun or netstack`}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nimge: x", []string{`unknown field "imge"`}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nadminPort: 9587", []string{"metricsPort: 9587 is adminPort's port too"}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nport: 70000\nlocalClusterID: Bad_ID", []string{"port: 70000 is not a port", `localClusterID: "Bad_ID"`}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nallowedPeerPrefixes: [10.0.0.1]", []string{`allowedPeerPrefixes[0]: "10.0.0.1" is not a prefix`}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nservice: {type: ExternalName}", []string{`service.type: "ExternalName"`}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nservice: {type: ClusterIP, externalTrafficPolicy: Local}", []string{"service.externalTrafficPolicy: needs type"}},
		// Passed into the relay configuration and refused by internal/core/config.
		{"image: r:1\naddresses: [1.2.3.4/32]\nhealth: {interval: fast}", []string{"relay configuration rendered from the sidecar file is invalid", "health.interval"}},
		{"image: r:1\naddresses: [1.2.3.4/32]\nexports: [10.244.1.0/16]", []string{"exports[0]"}},
	} {
		_, err := ParseSidecar([]byte(tc.in))
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.in, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.in, err, w)
			}
		}
	}
}

func TestRelayName(t *testing.T) {
	long := strings.Repeat("a", 40)
	for _, tc := range []struct {
		local, consumer string
		per             bool
		want            string
	}{
		{"provider-a", "consumer-1", false, "provider-a"},
		{"provider-a", "consumer-1", true, "provider-a-consumer-1"},
		{"provider-a", "", true, "provider-a"},
	} {
		if got := RelayName(tc.local, tc.consumer, tc.per); got != tc.want {
			t.Errorf("RelayName(%q, %q, %v) = %q, want %q", tc.local, tc.consumer, tc.per, got, tc.want)
		}
	}
	a, b := RelayName(long, long+"x", true), RelayName(long, long+"y", true)
	if len(a) != 63 || a == b {
		t.Errorf("long names %q, %q: want 63 characters and distinct", a, b)
	}
	if n := objectName("1b2c" + long + long); len(n) > 63 || !strings.HasPrefix(n, "liqo-relay-1b2c") {
		t.Errorf("objectName %q", n)
	}
}
