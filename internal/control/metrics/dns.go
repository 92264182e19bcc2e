package metrics

import "github.com/prometheus/client_golang/prometheus"

// dnsMetrics are the resolver's and the DNS responder's series.
type dnsMetrics struct {
	lookups *prometheus.CounterVec
	changes prometheus.Counter
	queries *prometheus.CounterVec
	limited prometheus.Counter
}

func newDNSMetrics() *dnsMetrics {
	return &dnsMetrics{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "dns_lookups_total",
			Help: "Lookups of path endpoint host names, by result (ok, nxdomain, nodata, servfail, timeout, error).",
		}, []string{"result"}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "dns_endpoint_changes_total",
			Help: "Path endpoints rewritten because their host name's address changed (or was lost after the grace period).",
		}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "dns_queries_total",
			Help: "Queries the DNS responder answered, by query type and response code.",
		}, []string{"type", "rcode"}),
		limited: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "dns_queries_limited_total",
			Help: "Queries the DNS responder dropped unanswered because their source exceeded dnsServer.rateLimit.",
		}),
	}
}

func (d *dnsMetrics) Describe(ch chan<- *prometheus.Desc) {
	d.lookups.Describe(ch)
	d.changes.Describe(ch)
	d.queries.Describe(ch)
	d.limited.Describe(ch)
}

func (d *dnsMetrics) Collect(ch chan<- prometheus.Metric) {
	d.lookups.Collect(ch)
	d.changes.Collect(ch)
	d.queries.Collect(ch)
	d.limited.Collect(ch)
}

// DNSLookup counts one endpoint name lookup by result.
func (m *Metrics) DNSLookup(result string) {
	if m == nil {
		return
	}
	m.dns.lookups.WithLabelValues(result).Inc()
}

// DNSEndpointChange counts one path endpoint rewritten after its name's
// address changed.
func (m *Metrics) DNSEndpointChange() {
	if m == nil {
		return
	}
	m.dns.changes.Inc()
}

// DNSQuery counts one query the responder answered, by query type (A,
// AAAA, ...) and response code (NOERROR, NXDOMAIN, REFUSED, ...).
func (m *Metrics) DNSQuery(qtype, rcode string) {
	if m == nil {
		return
	}
	m.dns.queries.WithLabelValues(qtype, rcode).Inc()
}

// DNSQueryLimited counts one query dropped by the per-source rate limit.
func (m *Metrics) DNSQueryLimited() {
	if m == nil {
		return
	}
	m.dns.limited.Inc()
}
