package webhook

import (
	"fmt"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/liqo-relay/relay/internal/core/config"
)

// RelayConfig renders the relay configuration file of the relay named
// name, which serves the consumer cluster consumer, and checks it with
// internal/core/config, as the relay will. The key comes from the key Secret
// through the API server (Kubernetes mode). With dns enabled it has
// dnsServer with the consumer's zone and no listen: the container's
// --dns-listen gives the pod's address.
func (s *Sidecar) RelayConfig(name, consumer string) ([]byte, error) {
	c := map[string]any{
		"name":             name,
		"privateKeySecret": map[string]any{"name": s.KeySecret},
		"listenPort":       s.Port,
		"mode":             s.Mode,
		"addresses":        s.Addresses,
		"admin": map[string]any{
			"listen":        "127.0.0.1:" + strconv.Itoa(int(s.AdminPort)),
			"metricsListen": "0.0.0.0:" + strconv.Itoa(int(s.MetricsPort)),
		},
	}
	if len(s.Exports) > 0 {
		c["exports"] = s.Exports
	}
	if s.MTU != 0 {
		c["mtu"] = s.MTU
	}
	if len(s.AllowedPeerPrefixes) > 0 {
		c["allowedPeerPrefixes"] = s.AllowedPeerPrefixes
	}
	if len(s.Health) > 0 {
		c["health"] = s.Health
	}
	if s.DNS.Enabled {
		c["dnsServer"] = s.DNS.dnsServerConfig(consumer)
	}
	if s.Log != (Log{}) {
		l := map[string]any{}
		if s.Log.Level != "" {
			l["level"] = s.Log.Level
		}
		if s.Log.Format != "" {
			l["format"] = s.Log.Format
		}
		c["log"] = l
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("rendering the relay configuration: %w", err)
	}
	if _, err := config.Parse(out); err != nil {
		return nil, fmt.Errorf("the relay configuration rendered from the sidecar file is invalid:\n%w", err)
	}
	return out, nil
}
