package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/liqo-relay/relay/internal/core/status"
)

// pingTimeout bounds one /ping request without a timeout parameter.
// Probes time out far sooner (a path that has not answered within a second
// is lost, and the agent waits MaxPingWait); this only guards against a
// Source that never returns.
const pingTimeout = 10 * time.Second

// MaxPingWait is the longest a ping waits for the answers to its probes,
// and how long the agent's Source.Ping waits when ctx does not end sooner.
// A path that has not answered within a second is lost, so waiting longer
// would only report the same timeout later. /ping?timeout=D waits D, up
// to MaxPingWait.
const MaxPingWait = 2 * time.Second

// handler serves the admin endpoints.
type handler struct {
	src   Source
	log   *slog.Logger
	token *tokenCheck // nil: no token required
	now   func() time.Time
	pings pingLimiter
}

func newHandler(src Source, reg *prometheus.Registry, log *slog.Logger, opts Options) http.Handler {
	h := &handler{src: src, log: log, token: newTokenCheck(opts.Token), now: opts.Now,
		pings: newPingLimiter(pingBurst, pingInterval)}
	if h.now == nil {
		h.now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	if !opts.HealthAndMetricsOnly {
		mux.HandleFunc("GET /status", h.authorized(h.status))
		mux.HandleFunc("GET /ping", h.authorized(h.ping))
	}
	if reg != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			Registry:          reg, // exports promhttp_metric_handler_errors_total
			EnableOpenMetrics: true,
		}))
	}
	return mux
}

// authorized wraps an endpoint that needs the bearer token, when one is
// configured.
func (h *handler) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.token.ok(r) {
			h.log.Debug("admin request without a valid token", "path", r.URL.Path, "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="liqo-relay admin"`)
			writeError(w, http.StatusUnauthorized, "this endpoint needs the bearer token of admin.tokenFile (Authorization: Bearer TOKEN)")
			return
		}
		next(w, r)
	}
}

func (h *handler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

func (h *handler) readyz(w http.ResponseWriter, _ *http.Request) {
	if ok, reason := h.src.Ready(); !ok {
		if reason == "" {
			reason = "not ready"
		}
		writeText(w, http.StatusServiceUnavailable, reason)
		return
	}
	writeText(w, http.StatusOK, "ok")
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	st, err := h.src.Status(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, normalized(st))
}

func (h *handler) ping(w http.ResponseWriter, r *http.Request) {
	peer := r.URL.Query().Get("peer")
	if peer == "" {
		writeError(w, http.StatusBadRequest, "missing query parameter peer")
		return
	}
	limit := pingTimeout
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxPingWait {
			writeError(w, http.StatusBadRequest, "timeout "+strconv.Quote(v)+": want a duration above 0 and at most "+MaxPingWait.String()+", like 500ms")
			return
		}
		limit = d
	}
	if ok, wait := h.pings.take(h.now()); !ok {
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		writeError(w, http.StatusTooManyRequests, "too many pings: at most "+strconv.Itoa(pingBurst)+" at once and one a second after that")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	res, err := h.src.Ping(ctx, peer)
	switch {
	case errors.Is(err, ErrUnknownPeer):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, err.Error())
		return
	case errors.Is(err, context.Canceled):
		// The server is shutting down (or the client left).
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case err != nil:
		h.log.Warn("ping failed", "peer", peer, "err", err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]status.PingResult, len(res))
	for i, pr := range res {
		pr.RTTMs = finite(pr.RTTMs)
		out[i] = pr
	}
	writeJSON(w, http.StatusOK, out)
}

// errorBody is the JSON body of every non-2xx answer from /ping.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil { // only for values json cannot encode, e.g. NaN
		writeText(w, http.StatusInternalServerError, "encoding response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write([]byte(msg + "\n"))
}
