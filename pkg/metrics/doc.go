// Package metrics is the relay's Prometheus facade: a typed set of methods
// the agent calls when something happens (a probe is sent, a path goes down,
// traffic is switched, a packet is dropped), backed by a private
// *prometheus.Registry rather than the global default one.
//
// Label cardinality is bounded by design. Per-path series carry {peer, path},
// so their number is peers x paths; the switch counter adds {from, to,
// reason}, all of them drawn from the same small sets. Label values that are
// not peer or path names (drop reasons, directions, reload results,
// handshake reasons) are typed constants. When a peer or one of its paths is
// removed from the configuration the agent calls DeletePeer or DeletePath so
// the stale series disappear instead of lingering at their last value.
//
// A nil *Metrics is valid and discards everything, so code under test can
// run without a registry.
//
// Every metric is listed, with its type, labels and meaning, in
// docs/metrics.md.
package metrics
