package config

import (
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

func TestPeerEqual(t *testing.T) {
	base := mustParse(t, onePeer+"    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}]\n").Peers[0]
	same := mustParse(t, onePeer+"    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}]\n").Peers[0]
	if !base.Equal(same) || !same.Equal(base) {
		t.Fatal("identical peers are not Equal")
	}
	for _, tc := range []struct {
		name   string
		mutate func(p *Peer)
	}{
		{"name", func(p *Peer) { p.Name = "x" }},
		{"key", func(p *Peer) { p.PublicKey = testKey(9) }},
		{"prefix", func(p *Peer) { p.Prefixes[0] = netip.MustParsePrefix("10.72.0.0/17") }},
		{"extra prefix", func(p *Peer) { p.Prefixes = append(p.Prefixes, netip.MustParsePrefix("10.9.0.0/16")) }},
		{"keepalive", func(p *Peer) { p.PersistentKeepalive = 0 }},
		{"path endpoint", func(p *Peer) { p.Paths[0].Endpoint = "192.0.2.11:51900" }},
		{"path bias", func(p *Peer) { p.Paths[0].Bias = time.Millisecond }},
		{"path order", func(p *Peer) {
			p.Paths = append(p.Paths, Path{Name: "b"})
			p.Paths[0], p.Paths[1] = p.Paths[1], p.Paths[0]
		}},
		{"mapping", func(p *Peer) { p.SeesUs[0].As = netip.MustParsePrefix("10.70.0.0/16") }},
		{"no mapping", func(p *Peer) { p.SeesUs = nil }},
		{"health", func(p *Peer) { p.Health.Interval++ }},
		{"dampening", func(p *Peer) { p.Health.Dampening.Enabled = false }},
		{"next public key", func(p *Peer) { p.NextPublicKey[0] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := (&Config{Peers: []Peer{base}}).Clone()
			q := &c.Peers[0]
			tc.mutate(q)
			if base.Equal(*q) || q.Equal(base) {
				t.Errorf("peers differing in %s are Equal", tc.name)
			}
		})
	}
	// Every field of Peer must be covered by Equal: a new field makes this
	// count change and reminds whoever adds it.
	if n := reflect.TypeOf(Peer{}).NumField(); n != 8 {
		t.Errorf("Peer has %d fields; update Equal and this test", n)
	}
}

func TestRedactedAndClone(t *testing.T) {
	c := mustParse(t, onePeer)
	r := c.Redacted()
	if !r.PrivateKey.IsZero() {
		t.Error("Redacted kept the private key")
	}
	if c.PrivateKey.IsZero() {
		t.Error("Redacted zeroed the original's key")
	}
	if strings.Contains(stringOf(r), vectorPrivate) {
		t.Error("printed redacted config contains the private key")
	}
	r.Peers[0].Prefixes[0] = netip.MustParsePrefix("10.1.0.0/16")
	r.Peers[0].Paths[0].Name = "x"
	r.Addresses[0] = netip.MustParsePrefix("10.2.0.0/16")
	r.Exports[0] = netip.MustParsePrefix("10.3.0.0/16")
	if c.Peers[0].Prefixes[0].String() != "10.72.0.0/16" || c.Peers[0].Paths[0].Name != "direct" ||
		c.Addresses[0].String() != "100.80.0.1/32" || c.Exports[0].String() != "10.244.0.0/16" {
		t.Error("Redacted copy shares slices with the original")
	}
}

func stringOf(c *Config) string { return fmt.Sprintf("%+v %v", c, *c) }

func TestPeerLookupReturnsElement(t *testing.T) {
	c := mustParse(t, onePeer)
	p, ok := c.Peer("provider-b")
	if !ok {
		t.Fatal("not found")
	}
	if p != &c.Peers[0] {
		t.Error("Peer returned a copy, not the element")
	}
}

func TestCheckPrivateKey(t *testing.T) {
	c := mustParse(t, "name: a\nprivateKeyFile: /k\naddresses: [100.80.0.1/32]\npeers:\n  - {name: b, publicKey: $OWNPUB, prefixes: [10.72.0.0/16], paths: [{name: d, endpoint: 'h:1'}]}\n")
	err := c.CheckPrivateKey(mustPrivate(t, vectorPrivate))
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != "peers[0].publicKey" {
		t.Errorf("CheckPrivateKey(own key of a peer) = %v", err)
	}
	if err := c.CheckPrivateKey(keys.Private{}); err == nil {
		t.Error("CheckPrivateKey(zero) succeeded")
	}
	if err := c.CheckPrivateKey(testPrivate(7)); err != nil {
		t.Errorf("CheckPrivateKey(other) = %v", err)
	}
}

// TestValidateBuiltInCode checks Validate on a Config built without YAML:
// zero values are errors, not defaults.
func TestValidateBuiltInCode(t *testing.T) {
	err := (&Config{}).Validate()
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Validate() = %v", err)
	}
	checkErrors(t, errs, []string{
		"name: required", "privateKey: required", "listenPort: 0 is not a port",
		`mode: "" is not a mode`, "addresses: required", "mtu: 0 is out of range",
		`admin.listen: "" is not host:port`, `log.level: "" is not a level`, `log.format: "" is not a format`,
		"health.interval", "health.detectMultiplier", "health.upThreshold",
		"health.selector", `dns.family: "" is not a family`, "dns.minTTL", "dns.timeout", "dns.retryMin",
		`dnsServer.zone: "" is not a DNS name`, "dnsServer.ttl", "dnsServer.rateLimit", "dnsServer.burst",
	})

	c := Defaults()
	c.Name = "a"
	c.PrivateKey = testPrivate(5)
	c.Addresses = []netip.Prefix{netip.MustParsePrefix("100.80.0.1/32")}
	p := DefaultPeer(c.Health)
	p.Name, p.PublicKey = "b", testKey(6)
	p.Prefixes = []netip.Prefix{netip.MustParsePrefix("10.72.0.0/16")}
	p.Paths = []Path{{Name: "direct", Endpoint: "192.0.2.1:51900", Host: "192.0.2.1", Port: 51900}}
	c.Peers = []Peer{p}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate(valid) = %v", err)
	}
	c.Peers[0].Paths[0].Port = 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "do not match endpoint") {
		t.Errorf("Validate(mismatched port) = %v", err)
	}
}
