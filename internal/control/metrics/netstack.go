package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// NetstackCounters are a netstack relay's flow-table and SOCKS5 figures, as
// the netstack reports them: totals since it started, except the two
// gauges (UDPFlows, SOCKS5Conns), which are current values.
type NetstackCounters struct {
	// UDPFlows is the number of forwarded UDP flows in the table now.
	UDPFlows int
	// UDPEvicted counts idle flows closed to make room in a full table.
	UDPEvicted uint64
	// UDPRefused counts new flows' datagrams dropped because the table was
	// full and no flow was idle enough to evict.
	UDPRefused uint64
	// SOCKS5Conns is the number of SOCKS5 client connections open now.
	SOCKS5Conns int
	// SOCKS5 refusals: connections over the connection cap, UDP
	// associations over their cap, and failed authentication.
	SOCKS5RefusedLimit    uint64
	SOCKS5RefusedUDPLimit uint64
	SOCKS5RefusedAuth     uint64
	// SOCKS5AcceptErrors counts failed Accept calls (each retried).
	SOCKS5AcceptErrors uint64
}

// SOCKS5 refusal reasons: the complete label value set.
const (
	socksRefusedLimit    = "limit"
	socksRefusedUDPLimit = "udp_limit"
	socksRefusedAuth     = "auth"
)

// netstackCollector reads a NetstackCounters source at scrape time. It
// exports nothing until a source is set, so that a TUN relay has no
// netstack series.
type netstackCollector struct {
	mu   sync.Mutex
	read func() NetstackCounters

	udpFlows    *prometheus.Desc
	socksConns  *prometheus.Desc
	udpEvicted  *cumulative
	udpRefused  *cumulative
	socksRefuse *cumulative
	acceptErrs  *cumulative
}

func newNetstackCollector() *netstackCollector {
	return &netstackCollector{
		udpFlows: prometheus.NewDesc(namespace+"_netstack_udp_flows",
			"Forwarded UDP flows open now (capped by netstack.udpMaxFlows).", nil, nil),
		socksConns: prometheus.NewDesc(namespace+"_socks5_connections",
			"SOCKS5 client connections open now (capped by netstack.socks5MaxConns).", nil, nil),
		udpEvicted: newCumulative(namespace+"_netstack_udp_flows_evicted_total",
			"Idle forwarded UDP flows closed to make room for a new flow in a full table."),
		udpRefused: newCumulative(namespace+"_netstack_udp_flows_refused_total",
			"Datagrams of new UDP flows dropped: the flow table was full and no flow idle enough to evict."),
		socksRefuse: newCumulative(namespace+"_socks5_refused_total",
			"SOCKS5 clients refused, by reason (limit, udp_limit or auth).", "reason"),
		acceptErrs: newCumulative(namespace+"_socks5_accept_errors_total",
			"Failed accepts of the SOCKS5 listener; each is retried after a pause."),
	}
}

// NetstackSource makes every scrape read the netstack's counters from read.
// Until it is called no relay_netstack_* or relay_socks5_* series exist, so
// only netstack relays export them. read must be safe to call from the
// scraping goroutine.
func (m *Metrics) NetstackSource(read func() NetstackCounters) {
	if m == nil {
		return
	}
	c := m.netstack
	c.mu.Lock()
	c.read = read
	c.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *netstackCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.udpFlows
	ch <- c.socksConns
	for _, cu := range c.cumulatives() {
		cu.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (c *netstackCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read == nil {
		return
	}
	v := c.read()
	ch <- prometheus.MustNewConstMetric(c.udpFlows, prometheus.GaugeValue, float64(v.UDPFlows))
	ch <- prometheus.MustNewConstMetric(c.socksConns, prometheus.GaugeValue, float64(v.SOCKS5Conns))
	c.udpEvicted.set(v.UDPEvicted)
	c.udpRefused.set(v.UDPRefused)
	c.socksRefuse.set(v.SOCKS5RefusedLimit, socksRefusedLimit)
	c.socksRefuse.set(v.SOCKS5RefusedUDPLimit, socksRefusedUDPLimit)
	c.socksRefuse.set(v.SOCKS5RefusedAuth, socksRefusedAuth)
	c.acceptErrs.set(v.SOCKS5AcceptErrors)
	for _, cu := range c.cumulatives() {
		cu.Collect(ch)
	}
}

func (c *netstackCollector) cumulatives() []*cumulative {
	return []*cumulative{c.udpEvicted, c.udpRefused, c.socksRefuse, c.acceptErrs}
}
