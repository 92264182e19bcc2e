package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// SetPeerBytes records the peer's cumulative transfer counters as WireGuard
// reports them (rx_bytes and tx_bytes of the peer). The agent passes the
// totals it reads, not increments; the collector exports them at scrape time
// as relay_peer_bytes_total{peer, direction="rx"|"tx"}.
//
// WireGuard's counters restart at zero when the peer is removed from and
// re-added to the device (a reconfiguration, a restart of the peer's
// entry). When a value goes down the collector takes it as such a reset and
// keeps the exported counter monotonic by carrying the last total forward,
// so rate() and increase() see no spurious reset. DeletePeer forgets the
// peer entirely.
func (m *Metrics) SetPeerBytes(peer string, rx, tx uint64) {
	if m == nil {
		return
	}
	m.peerBytes.set(peer, rx, tx)
}

// bytesCollector exports cumulative per-peer byte counters supplied from
// outside. It is a Collector rather than a CounterVec because the values
// are totals owned by WireGuard, not increments owned by us.
type bytesCollector struct {
	desc *prometheus.Desc

	mu    sync.Mutex
	peers map[string]*peerBytes
}

// peerBytes is one peer's counters: the exported value is base + last.
type peerBytes struct {
	rx, tx monotonic
}

// monotonic turns a source counter that may reset into a monotonic one.
type monotonic struct {
	base, last uint64
}

func (c *monotonic) set(v uint64) {
	if v < c.last {
		c.base += c.last
	}
	c.last = v
}

func (c *monotonic) value() float64 { return float64(c.base + c.last) }

func newBytesCollector() *bytesCollector {
	return &bytesCollector{
		desc: prometheus.NewDesc(namespace+"_peer_bytes_total",
			"Bytes exchanged with the peer over WireGuard, by direction (rx or tx).",
			[]string{"peer", "direction"}, nil),
		peers: make(map[string]*peerBytes),
	}
}

func (c *bytesCollector) set(peer string, rx, tx uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.peers[peer]
	if p == nil {
		p = &peerBytes{}
		c.peers[peer] = p
	}
	p.rx.set(rx)
	p.tx.set(tx)
}

func (c *bytesCollector) delete(peer string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.peers, peer)
}

// Describe implements prometheus.Collector.
func (c *bytesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *bytesCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, p := range c.peers {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, p.rx.value(), name, "rx")
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, p.tx.value(), name, "tx")
	}
}
