package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DNSServer configures the relay's topology-aware DNS responder
// (internal/control/dnsserver, docs/dns.md). It is off while Listen is empty.
type DNSServer struct {
	// Listen are the IP:port addresses it answers on, UDP and TCP each.
	Listen []netip.AddrPort
	// Zone is the zone it serves, fully qualified, lower case.
	Zone string
	// TTL is the TTL of every answer: short, so clients move after a
	// failover.
	TTL time.Duration
	// RateLimit is the queries per second each source address may send
	// on average, Burst how many it may send at once.
	RateLimit int
	Burst     int
}

// Defaults of the dnsServer settings.
const (
	DefaultDNSServerZone = "relay.local."
	// DefaultDNSServerTTL is short enough that a client moves within a
	// few seconds of a failover, long enough to spare the responder.
	DefaultDNSServerTTL = 5 * time.Second
	// DefaultDNSServerRateLimit and Burst allow a busy pod's resolver
	// (CoreDNS caches for at most the TTL) and refuse a flood.
	DefaultDNSServerRateLimit = 100
	DefaultDNSServerBurst     = 200
)

// DefaultDNSServer returns the responder's defaults: off.
func DefaultDNSServer() DNSServer {
	return DNSServer{Zone: DefaultDNSServerZone, TTL: DefaultDNSServerTTL,
		RateLimit: DefaultDNSServerRateLimit, Burst: DefaultDNSServerBurst}
}

// Enabled reports whether the responder runs.
func (s *DNSServer) Enabled() bool { return len(s.Listen) > 0 }

var dnsServerFields = []string{"listen", "zone", "ttl", "rateLimit", "burst"}

func (d *decoder) dnsServer(n *yaml.Node, s *DNSServer) {
	const p = "dnsServer"
	m := d.fields(n, p, dnsServerFields...)
	if m == nil {
		return
	}
	if n := m["listen"]; n != nil {
		lp := field(p, "listen")
		if elems := d.list(n, lp); elems != nil {
			s.Listen = make([]netip.AddrPort, 0, len(elems))
			for i, e := range elems {
				ep := index(lp, i)
				v, ok := d.scalar(e, ep, "IP:port")
				if !ok {
					continue
				}
				ap, err := netip.ParseAddrPort(v)
				if err != nil {
					d.errs.decodef(ep, fmt.Sprintf("%q is not IP:port (IPv6 in brackets)", v))
					continue
				}
				s.Listen = append(s.Listen, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
			}
		}
	}
	d.setString(m, p, "zone", &s.Zone)
	d.setDuration(m, p, "ttl", &s.TTL)
	d.setInt(m, p, "rateLimit", &s.RateLimit)
	d.setInt(m, p, "burst", &s.Burst)
	s.Zone = strings.ToLower(s.Zone)
	if s.Zone != "" && !strings.HasSuffix(s.Zone, ".") {
		s.Zone += "."
	}
}

func (s *DNSServer) validate(e *errList) {
	if z := strings.TrimSuffix(s.Zone, "."); z == "" || !isHostname(z) {
		e.checkf("dnsServer.zone", fmt.Sprintf("%q is not a DNS name", s.Zone))
	}
	if s.TTL < time.Second || s.TTL > time.Hour {
		e.checkf("dnsServer.ttl", fmt.Sprintf("%s is out of range (1s..1h)", s.TTL))
	}
	if s.RateLimit < 1 {
		e.checkf("dnsServer.rateLimit", fmt.Sprintf("%d is below 1", s.RateLimit))
	}
	if s.Burst < 1 {
		e.checkf("dnsServer.burst", fmt.Sprintf("%d is below 1", s.Burst))
	}
	seen := map[netip.AddrPort]bool{}
	for i, ap := range s.Listen {
		switch {
		case ap.Addr().IsUnspecified():
			e.checkf(index("dnsServer.listen", i), fmt.Sprintf("%s listens on every address: name the addresses to answer on (it is not an open resolver)", ap))
		case seen[ap]:
			e.checkf(index("dnsServer.listen", i), fmt.Sprintf("%s is listed twice", ap))
		}
		seen[ap] = true
	}
}
