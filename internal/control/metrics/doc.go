// Package metrics is the relay's Prometheus facade: a typed set of methods
// the agent calls when something happens (a probe is sent, a path goes down,
// traffic is switched) or when it reads counters kept elsewhere (WireGuard's
// byte counts, the health monitor's lost probes, the packet pipeline's
// drops), backed by a private *prometheus.Registry rather than the global
// default one.
//
// Two kinds of counter input exist, and each metric takes exactly one:
// events (ProbeSent, Switch, HandshakeInitiated, ConfigReload,
// ProbeRejected) increment; totals (PeerBytes, PathStats, Pipeline) are
// the source's cumulative values, passed as read and exported at scrape
// time, monotonic even when the source restarts from zero.
//
// Label cardinality is bounded by design. Per-path series carry {peer, path},
// so their number is peers x paths; the switch counter adds {from, to,
// reason}, all of them drawn from the same small sets. Label values that are
// not peer or path names (drop reasons, directions, reload results) come
// from fixed sets inside this package; switch and handshake reasons are the
// agent's and failover's fixed literals. When a peer or one of its paths is
// removed from the configuration the agent calls RemovePeer or RemovePath so
// the stale series disappear instead of lingering at their last value.
//
// A nil *Metrics is valid and discards everything, so code under test can
// run without a registry.
//
// Every metric is listed, with its type, labels and meaning, in
// docs/metrics.md.
package metrics
