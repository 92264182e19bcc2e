package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// LiqoCounters are the Liqo gateway integration's counters (internal/dataplane/liqonet).
type LiqoCounters struct {
	// Resets counts, per peer, the relay-pinned connections reset when the
	// relay withdrew the peer.
	Resets map[string]uint64
	// Reasserts counts the moves of the relay's policy rules ahead of a
	// rule that landed before them.
	Reasserts uint64
}

// liqoCollector reads LiqoCounters at every scrape.
type liqoCollector struct {
	resets    *prometheus.Desc
	reasserts *prometheus.Desc

	mu   sync.Mutex
	read func() LiqoCounters
}

func newLiqoCollector() *liqoCollector {
	return &liqoCollector{
		resets: prometheus.NewDesc(namespace+"_connections_reset_total",
			"Connections pinned to the relay that were reset when the relay withdrew the peer (every path down): they cannot survive the fall back to Liqo's path, where the remote pod sees another source address and port.",
			[]string{"peer"}, nil),
		reasserts: prometheus.NewDesc(namespace+"_policy_rule_reasserts_total",
			"Times the relay moved its policy rules ahead of a rule (Liqo's, added without a priority) that landed before them.",
			nil, nil),
	}
}

// LiqoSource makes every scrape read the Liqo integration's counters from
// read. Until it is called no relay_connections_reset_total or
// relay_policy_rule_reasserts_total series exist, so only relays with a liqo
// section export them. read must be safe to call from the scraping
// goroutine.
func (m *Metrics) LiqoSource(read func() LiqoCounters) {
	if m == nil {
		return
	}
	m.liqo.mu.Lock()
	m.liqo.read = read
	m.liqo.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (c *liqoCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.resets
	ch <- c.reasserts
}

// Collect implements prometheus.Collector.
func (c *liqoCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	read := c.read
	c.mu.Unlock()
	if read == nil {
		return
	}
	s := read()
	ch <- prometheus.MustNewConstMetric(c.reasserts, prometheus.CounterValue, float64(s.Reasserts))
	for peer, n := range s.Resets {
		ch <- prometheus.MustNewConstMetric(c.resets, prometheus.CounterValue, float64(n), peer)
	}
}
