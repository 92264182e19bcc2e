// Package admin is the relay's local control surface: an HTTP server on the
// admin address (default 127.0.0.1:9586) and the client and renderers that
// the relay command uses to talk to it.
//
// Endpoints:
//
//	/healthz          200 "ok" while the process serves HTTP at all.
//	/readyz           200 once the configuration is applied and the device is
//	                  up, 503 with the reason otherwise. Never tied to peer
//	                  reachability: a sidecar that turns unready takes the
//	                  Liqo gateway pod out of its Service.
//	/status           the status.Status document as JSON (see docs/status.md); its
//	                  field names are an interface scripts rely on.
//	/metrics          the Prometheus registry passed to NewServer.
//	/ping?peer=NAME   probes every path of the peer now and returns
//	                  []status.PingResult as JSON; 404 for an unknown peer, 429
//	                  with Retry-After beyond 5 pings at once and 1/s.
//	                  &timeout=D waits D for the answers instead of
//	                  MaxPingWait (at most that; 400 otherwise).
//
// With Options.Token, /status and /ping answer 401 without
// "Authorization: Bearer TOKEN" (compared in constant time). With
// Options.HealthAndMetricsOnly the server has only /healthz, /readyz and
// /metrics: the one for admin.metricsListen, which may listen where the
// kubelet and Prometheus reach it.
//
// The server asks a Source (implemented by the agent) for everything it
// shows; package admintest has a fake one. The document types themselves
// live in internal/core/status, so that packages which only read a status
// (the Kubernetes controllers) need not import this HTTP package. FetchStatus and FetchPing are the
// client side, RenderTable and RenderPing the human output of `relay status`
// and `relay ping`.
package admin
