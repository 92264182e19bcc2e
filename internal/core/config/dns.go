package config

import (
	"fmt"
	"net/netip"
	"time"

	"go.yaml.in/yaml/v3"
)

// DNS configures how path endpoints given as host names are resolved and
// kept fresh (internal/resolver).
type DNS struct {
	// Servers are the resolvers asked, as IP:port (port 53 when left
	// out); empty means the nameservers of ResolvConf.
	Servers []netip.AddrPort
	// Family chooses between IPv4 (A) and IPv6 (AAAA) answers.
	Family Family
	// MinTTL and MaxTTL bound an answer's TTL.
	MinTTL, MaxTTL time.Duration
	// Grace keeps the last good address this long after its TTL ran out
	// while lookups fail.
	Grace time.Duration
	// Timeout bounds one exchange with one server.
	Timeout time.Duration
	// RetryMin and RetryMax bound the backoff between failed lookups.
	RetryMin, RetryMax time.Duration
}

// Family is the address family preference of name lookups.
type Family string

// Address families.
const (
	FamilyPreferIPv4 Family = "prefer-ipv4" // A and AAAA, IPv4 first
	FamilyPreferIPv6 Family = "prefer-ipv6" // A and AAAA, IPv6 first
	FamilyIPv4       Family = "ipv4"        // A only
	FamilyIPv6       Family = "ipv6"        // AAAA only
)

// Defaults of the dns settings.
const (
	// DefaultDNSFamily prefers IPv4, as Liqo's gateways do.
	DefaultDNSFamily = FamilyPreferIPv4
	// DefaultDNSMinTTL keeps a 0 s TTL from becoming a lookup loop; a
	// moved load balancer is still followed within seconds.
	DefaultDNSMinTTL = 5 * time.Second
	// DefaultDNSMaxTTL follows a changed name within 5 minutes whatever
	// TTL its zone sets.
	DefaultDNSMaxTTL = 5 * time.Minute
	// DefaultDNSGrace rides out a resolver outage of 5 minutes on the
	// last good address: an endpoint changes far less often than DNS
	// fails.
	DefaultDNSGrace = 5 * time.Minute
	// DefaultDNSTimeout is the usual resolv.conf timeout.
	DefaultDNSTimeout = 2 * time.Second
	// DefaultDNSRetryMin and DefaultDNSRetryMax: retry soon after one
	// failure, at most every 30 s when the resolver stays away.
	DefaultDNSRetryMin = time.Second
	DefaultDNSRetryMax = 30 * time.Second
)

// DefaultDNS returns the dns defaults: the system's resolvers.
func DefaultDNS() DNS {
	return DNS{
		Family: DefaultDNSFamily, MinTTL: DefaultDNSMinTTL, MaxTTL: DefaultDNSMaxTTL,
		Grace: DefaultDNSGrace, Timeout: DefaultDNSTimeout,
		RetryMin: DefaultDNSRetryMin, RetryMax: DefaultDNSRetryMax,
	}
}

var dnsFields = []string{"servers", "family", "minTTL", "maxTTL", "grace", "timeout", "retryMin", "retryMax"}

// dns applies the fields present in n on top of *s.
func (d *decoder) dns(n *yaml.Node, s *DNS) {
	const p = "dns"
	m := d.fields(n, p, dnsFields...)
	if m == nil {
		return
	}
	if n := m["servers"]; n != nil {
		sp := field(p, "servers")
		if elems := d.list(n, sp); elems != nil {
			s.Servers = make([]netip.AddrPort, 0, len(elems))
			for i, e := range elems {
				ep := index(sp, i)
				v, ok := d.scalar(e, ep, "an IP address or IP:port")
				if !ok {
					continue
				}
				ap, msg := parseServer(v)
				if msg != "" {
					d.errs.decodef(ep, msg)
					continue
				}
				s.Servers = append(s.Servers, ap)
			}
		}
	}
	d.setString(m, p, "family", (*string)(&s.Family))
	d.setDuration(m, p, "minTTL", &s.MinTTL)
	d.setDuration(m, p, "maxTTL", &s.MaxTTL)
	d.setDuration(m, p, "grace", &s.Grace)
	d.setDuration(m, p, "timeout", &s.Timeout)
	d.setDuration(m, p, "retryMin", &s.RetryMin)
	d.setDuration(m, p, "retryMax", &s.RetryMax)
}

// parseServer reads a resolver address: IP, IP:port or [IPv6]:port.
func parseServer(v string) (netip.AddrPort, string) {
	if a, err := netip.ParseAddr(v); err == nil {
		return netip.AddrPortFrom(a.Unmap(), 53), ""
	}
	ap, err := netip.ParseAddrPort(v)
	if err != nil || ap.Port() == 0 {
		return netip.AddrPort{}, fmt.Sprintf("%q is not an IP address or IP:port (port 1..65535)", v)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ""
}

// MaxDNSTimeout bounds dns.timeout: a lookup must end long before a
// refresh is due again.
const MaxDNSTimeout = 30 * time.Second

// validate checks the dns settings.
func (s *DNS) validate(e *errList) {
	switch s.Family {
	case FamilyPreferIPv4, FamilyPreferIPv6, FamilyIPv4, FamilyIPv6:
	default:
		e.checkf("dns.family", fmt.Sprintf("%q is not a family (prefer-ipv4, prefer-ipv6, ipv4 or ipv6)", s.Family))
	}
	if s.MinTTL < time.Second {
		e.checkf("dns.minTTL", fmt.Sprintf("%s is below 1s", s.MinTTL))
	}
	if s.MaxTTL < s.MinTTL {
		e.checkf("dns.maxTTL", fmt.Sprintf("%s is below dns.minTTL (%s)", s.MaxTTL, s.MinTTL))
	}
	if s.Grace < 0 {
		e.checkf("dns.grace", fmt.Sprintf("%s is negative", s.Grace))
	}
	if s.Timeout < 100*time.Millisecond || s.Timeout > MaxDNSTimeout {
		e.checkf("dns.timeout", fmt.Sprintf("%s is out of range (100ms..%s)", s.Timeout, MaxDNSTimeout))
	}
	if s.RetryMin < 100*time.Millisecond {
		e.checkf("dns.retryMin", fmt.Sprintf("%s is below 100ms", s.RetryMin))
	}
	if s.RetryMax < s.RetryMin {
		e.checkf("dns.retryMax", fmt.Sprintf("%s is below dns.retryMin (%s)", s.RetryMax, s.RetryMin))
	}
	for i, ap := range s.Servers {
		if !ap.Addr().IsValid() || ap.Addr().IsUnspecified() {
			e.checkf(index("dns.servers", i), fmt.Sprintf("%s is not a resolver address", ap))
		}
	}
}
