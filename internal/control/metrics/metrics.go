package metrics

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/liqo-relay/relay/internal/version"
)

// namespace prefixes every relay metric.
const namespace = "relay"

// rttBuckets are the upper bounds, in seconds, of the RTT histogram. They
// span 0.1 ms (two relays in one data centre) to 2 s (a path so congested it
// is about to be declared down), roughly 1-2.5-5 per decade so that
// histogram_quantile stays within a factor of about two everywhere.
var rttBuckets = []float64{
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2,
}

// Metrics holds every metric the relay exports. Build it with New; the
// zero value is not usable, but a nil *Metrics is (it discards everything).
// All methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	pathUp         *prometheus.GaugeVec
	pathActive     *prometheus.GaugeVec
	pathRTT        *prometheus.HistogramVec
	pathLoss       *prometheus.GaugeVec
	probesSent     *prometheus.CounterVec
	probesLost     *cumulative
	rttOutliers    *cumulative
	probesRejected prometheus.Counter
	probesDropped  *prometheus.CounterVec
	switches       *prometheus.CounterVec
	reachable      *prometheus.GaugeVec
	handshakes     *prometheus.CounterVec
	peerBytes      *cumulative
	redundantPkts  *cumulative
	redundantBytes *cumulative
	dropped        *cumulative
	translated     *cumulative
	mssClamped     *cumulative
	reloadOK       prometheus.Counter
	reloadError    prometheus.Counter
	netstack       *netstackCollector
	liqo           *liqoCollector
	dns            *dnsMetrics
	schedule       *scheduleMetrics
}

// Option adjusts New.
type Option func(*options)

type options struct {
	version string
}

// WithVersion sets the version label of relay_build_info. Without it the
// label is the version the binary was stamped with (internal/version).
func WithVersion(v string) Option {
	return func(o *options) { o.version = v }
}

// New builds the metrics and registers them, together with the Go runtime
// and process collectors, on a fresh registry (see Registry).
func New(opts ...Option) *Metrics {
	o := options{version: version.String()}
	for _, opt := range opts {
		opt(&o)
	}

	pathLabels := []string{"peer", "path"}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		pathUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "path_up",
			Help: "1 if the path to the peer is up (probes answered), else 0.",
		}, pathLabels),
		pathActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "path_active",
			Help: "1 if the path currently carries the peer's traffic, else 0.",
		}, pathLabels),
		pathRTT: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "path_rtt_seconds",
			Help:    "Round-trip time of answered probes on the path.",
			Buckets: rttBuckets,
		}, pathLabels),
		pathLoss: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "path_loss_ratio",
			Help: "Estimated probe loss on the path, 0 to 1.",
		}, pathLabels),
		probesSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "probes_sent_total",
			Help: "Probes sent on the path.",
		}, pathLabels),
		probesLost: newCumulative(namespace+"_probes_lost_total",
			"Probes on the path that got no answer in time.", pathLabels...),
		rttOutliers: newCumulative(namespace+"_probe_rtt_outliers_total",
			"Probe answers whose RTT was an isolated outlier (over twice the path's recent median plus 1 ms, at most 2 in 8 samples), clipped in the smoothed RTT: mostly the relays' own scheduling delays, e.g. CPU throttling.", pathLabels...),
		probesRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "probes_rejected_total",
			Help: "Received probe packets discarded: bad authentication, replays, or no room to handle them.",
		}),
		probesDropped: newProbesDropped(),
		switches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "path_switches_total",
			Help: "Changes of the peer's active path, by old path, new path and reason.",
		}, []string{"peer", "from", "to", "reason"}),
		reachable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "peer_reachable",
			Help: "1 if at least one path to the peer is usable, else 0.",
		}, []string{"peer"}),
		handshakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "handshakes_initiated_total",
			Help: "WireGuard handshakes the relay initiated with the peer, by reason.",
		}, []string{"peer", "reason"}),
		peerBytes: newCumulative(namespace+"_peer_bytes_total",
			"Bytes exchanged with the peer over WireGuard, by direction (rx or tx).", "peer", "direction"),
		redundantPkts: newCumulative(namespace+"_redundant_packets_total",
			"Copies of WireGuard data messages sent to the peer over its second path (redundant sending)", "peer"),
		redundantBytes: newCumulative(namespace+"_redundant_bytes_total",
			"Bytes on the wire of the copies sent to the peer over its second path (redundant sending)", "peer"),
		dropped: newCumulative(namespace+"_packets_dropped_total",
			"Packets the router refused, by reason.", "reason"),
		translated: newCumulative(namespace+"_translated_packets_total",
			"Packets whose addresses were rewritten to resolve overlapping pod CIDRs, by direction (rx or tx).", "direction"),
		mssClamped: newCumulative(namespace+"_mss_clamped_total",
			"TCP SYN packets whose MSS option was lowered to fit the tunnel MTU."),
		netstack: newNetstackCollector(),
		liqo:     newLiqoCollector(),
		dns:      newDNSMetrics(),
		schedule: newScheduleMetrics(),
	}
	// Bounded label sets are exported from the start, at 0, so that rate()
	// and absent() work before the first event.
	m.Pipeline(PipelineCounters{})

	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "config_reloads_total",
		Help: "Configuration reloads, by result (ok or error).",
	}, []string{"result"})
	m.reloadOK = reloads.WithLabelValues("ok")
	m.reloadError = reloads.WithLabelValues("error")

	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "Always 1; the labels say which relay build is running.",
		ConstLabels: prometheus.Labels{"version": o.version, "goversion": runtime.Version()},
	})
	buildInfo.Set(1)

	m.reg.MustRegister(
		m.pathUp, m.pathActive, m.pathRTT, m.pathLoss,
		m.probesSent, m.probesLost, m.rttOutliers, m.probesRejected, m.probesDropped, m.switches,
		m.reachable, m.handshakes, m.peerBytes, m.redundantPkts, m.redundantBytes,
		m.dropped, m.translated, m.mssClamped, reloads, buildInfo,
		m.netstack, m.liqo,
		m.dns, m.schedule,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the registry holding every relay metric, for the admin
// server's /metrics handler. It returns nil for a nil *Metrics.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}
