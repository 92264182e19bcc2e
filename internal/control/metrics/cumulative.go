package metrics

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// cumulative exports counters whose totals are kept elsewhere: WireGuard's
// per-peer byte counts, the health monitor's lost probes, the packet
// pipeline's drop and rewrite counts. The agent reads those totals
// periodically and passes them in as they are; this collector reports them
// at scrape time. That is simpler and safer than turning them into
// increments (no double counting, no lost deltas when a read is skipped).
//
// A source counter can restart at zero: WireGuard's when a peer is removed
// from and re-added to the device, the pipeline's when the device is
// recreated. A total lower than the previous one is taken as such a reset;
// the last total is carried forward so the exported counter stays
// monotonic and rate() sees no spurious reset. (Any increase that happened
// between the last read and the reset is lost, which is unavoidable.)
type cumulative struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	series map[string]*cumulativeSeries
}

type cumulativeSeries struct {
	labels     []string
	base, last uint64 // exported value is base + last
}

func newCumulative(name, help string, labels ...string) *cumulative {
	return &cumulative{
		desc:   prometheus.NewDesc(name, help, labels, nil),
		series: make(map[string]*cumulativeSeries),
	}
}

// labelKey joins label values with a byte that cannot appear in UTF-8 text.
func labelKey(values []string) string { return strings.Join(values, "\xff") }

// set records the source's current total for the series with the given
// label values.
func (c *cumulative) set(total uint64, values ...string) {
	key := labelKey(values)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seriesLocked(key, values).setLocked(total)
}

// seriesLocked returns the series with the given key and label values,
// creating it; c.mu is held.
func (c *cumulative) seriesLocked(key string, values []string) *cumulativeSeries {
	s := c.series[key]
	if s == nil {
		s = &cumulativeSeries{labels: slices.Clone(values)}
		c.series[key] = s
	}
	return s
}

// setLocked records the source's current total, taking a lower one as a
// reset; the cumulative's mu is held.
func (s *cumulativeSeries) setLocked(total uint64) {
	if total < s.last {
		s.base += s.last
	}
	s.last = total
}

// deleteMatching removes every series whose label values satisfy match.
func (c *cumulative) deleteMatching(match func(values []string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, s := range c.series {
		if match(s.labels) {
			delete(c.series, k)
		}
	}
}

// Describe implements prometheus.Collector.
func (c *cumulative) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *cumulative) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.series {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(s.base+s.last), s.labels...)
	}
}
