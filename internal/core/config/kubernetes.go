package config

import (
	"fmt"
	"net/netip"

	"go.yaml.in/yaml/v3"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Settings for a relay driven from Kubernetes (docs/kubernetes.md). They
// are plain data: internal/core/config knows nothing of Kubernetes.

// DefaultSecretKey is the data key of the private key in its Secret.
const DefaultSecretKey = "privateKey"

// SecretRef names the Secret, in the relay's namespace, that holds the
// relay's private key, and the key of its data.
type SecretRef struct {
	Name string
	Key  string
}

// IsZero reports whether no Secret is named.
func (s SecretRef) IsZero() bool { return s.Name == "" }

// kubernetesFields decodes privateKeySecret and allowedPeerPrefixes.
func (d *decoder) kubernetesFields(m map[string]*yaml.Node, c *Config) {
	if n := m["privateKeySecret"]; n != nil {
		if t := d.fields(n, "privateKeySecret", "name", "key"); t != nil {
			d.setString(t, "privateKeySecret", "name", &c.PrivateKeySecret.Name)
			d.setString(t, "privateKeySecret", "key", &c.PrivateKeySecret.Key)
		}
		if c.PrivateKeySecret.Key == "" {
			c.PrivateKeySecret.Key = DefaultSecretKey
		}
	}
	d.setPrefixes(m, "", "allowedPeerPrefixes", &c.AllowedPeerPrefixes)
}

// validateKubernetes checks privateKeySecret and allowedPeerPrefixes.
func (c *Config) validateKubernetes(e *errList) {
	if s := c.PrivateKeySecret; !s.IsZero() {
		if !isDNSSubdomain(s.Name) {
			e.checkf("privateKeySecret.name", fmt.Sprintf("%q is not a valid Secret name (a DNS-1123 subdomain)", s.Name))
		}
		if !isSecretDataKey(s.Key) {
			e.checkf("privateKeySecret.key", fmt.Sprintf("%q is not a valid Secret data key (letters, digits, '-', '_', '.')", s.Key))
		}
	}
	checkPrefixList(e, "allowedPeerPrefixes", c.AllowedPeerPrefixes, false)
}

// keySources counts the ways the private key is given.
func (c *Config) keySources() int {
	n := 0
	if !c.PrivateKey.IsZero() {
		n++
	}
	if c.PrivateKeyFile != "" {
		n++
	}
	if !c.PrivateKeySecret.IsZero() {
		n++
	}
	return n
}

// AllowsPrefix reports whether p lies within AllowedPeerPrefixes, or
// whether the list is empty.
func (c *Config) AllowsPrefix(p netip.Prefix) bool {
	return len(c.AllowedPeerPrefixes) == 0 || within(p, c.AllowedPeerPrefixes)
}

func isDNSSubdomain(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isDNSLabel(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

func isSecretDataKey(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// SetKeyFromSecret sets the private key read from PrivateKeySecret.
func (c *Config) SetKeyFromSecret(k keys.Private) {
	c.PrivateKey = k
	c.keyFromSecret = true
}
