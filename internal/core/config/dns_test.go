package config

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

func TestDNSDefaultsAndValues(t *testing.T) {
	c := mustParse(t, head)
	if d := c.DNS; d.Family != FamilyPreferIPv4 || d.MinTTL != 5*time.Second || d.MaxTTL != 5*time.Minute ||
		d.Grace != 5*time.Minute || d.Timeout != 2*time.Second || len(d.Servers) != 0 {
		t.Errorf("dns defaults: %+v", d)
	}
	if s := c.DNSServer; s.Enabled() || s.Zone != "relay.local." || s.TTL != 5*time.Second {
		t.Errorf("dnsServer defaults: %+v", s)
	}
	c = mustParse(t, head+"dns: {servers: [10.96.0.10, '[2001:db8::53]:5353'], family: ipv6, minTTL: 2s, maxTTL: 1m, grace: 0s}\n"+
		"dnsServer: {listen: ['10.244.0.53:53'], zone: Relay.Example, ttl: 3s}\n")
	want := []netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:53"), netip.MustParseAddrPort("[2001:db8::53]:5353")}
	if !slices.Equal(c.DNS.Servers, want) || c.DNS.Family != FamilyIPv6 || c.DNS.Grace != 0 {
		t.Errorf("dns: %+v", c.DNS)
	}
	if s := c.DNSServer; !s.Enabled() || s.Zone != "relay.example." || s.TTL != 3*time.Second {
		t.Errorf("dnsServer: %+v", s)
	}
}

func TestDNSErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"bad server", "dns: {servers: [dns.example]}\n", []string{`dns.servers[0]: "dns.example" is not an IP address or IP:port`}},
		{"family", "dns: {family: v4}\n", []string{`dns.family: "v4" is not a family`}},
		{"ttl order", "dns: {minTTL: 10s, maxTTL: 5s}\n", []string{"dns.maxTTL: 5s is below dns.minTTL (10s)"}},
		{"min ttl", "dns: {minTTL: 0s}\n", []string{"dns.minTTL: 0s is below 1s"}},
		{"timeout", "dns: {timeout: 1m}\n", []string{"dns.timeout: 1m0s is out of range"}},
		{"retry", "dns: {retryMin: 2s, retryMax: 1s}\n", []string{"dns.retryMax: 1s is below dns.retryMin (2s)"}},
		{"grace", "dns: {grace: -1s}\n", []string{"dns.grace: -1s is negative"}},
		{"unknown", "dns: {server: [1.1.1.1]}\n", []string{"dns.server"}},
		{"wildcard listen", "dnsServer: {listen: ['0.0.0.0:53']}\n", []string{"dnsServer.listen[0]: 0.0.0.0:53 listens on every address"}},
		{"listen twice", "dnsServer: {listen: ['10.0.0.1:53', '10.0.0.1:53']}\n", []string{"dnsServer.listen[1]: 10.0.0.1:53 is listed twice"}},
		{"listen no port", "dnsServer: {listen: [10.0.0.1]}\n", []string{`dnsServer.listen[0]: "10.0.0.1" is not IP:port`}},
		{"zone", "dnsServer: {zone: 'a..b'}\n", []string{`dnsServer.zone: "a..b." is not a DNS name`}},
		{"ttl", "dnsServer: {ttl: 0s, rateLimit: 0, burst: 0}\n", []string{"dnsServer.ttl", "dnsServer.rateLimit", "dnsServer.burst"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkErrors(t, parseErrors(t, head+tc.doc), tc.want)
		})
	}
}
