package webhook

import "github.com/prometheus/client_golang/prometheus"

// Metrics are relay inject's metrics (docs/inject.md, Metrics).
type Metrics struct {
	reviews      *prometheus.CounterVec
	missing      *prometheus.GaugeVec
	syncs        *prometheus.CounterVec
	certNotAfter prometheus.Gauge
}

// NewMetrics registers the metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "relay_inject_reviews_total",
			Help: "Pod admission reviews, by result: injected, skipped (not a gateway, opted out, already injected) or error (admitted without the sidecar).",
		}, []string{"result"}),
		missing: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "relay_inject_missing_sidecar",
			Help: "Gateway pods without the relay sidecar that were not opted out, per namespace and gateway (the webhook failed open or was down).",
		}, []string{"namespace", "gateway"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "relay_inject_syncs_total",
			Help: "Per-gateway controller syncs, by result: ok or error.",
		}, []string{"result"}),
		certNotAfter: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "relay_inject_cert_not_after_seconds",
			Help: "Expiry of the webhook's serving certificate, in Unix seconds (0 with --cert-manager).",
		}),
	}
	reg.MustRegister(m.reviews, m.missing, m.syncs, m.certNotAfter)
	return m
}
