package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// pingTimeout bounds one /ping request. Probes time out far sooner (a path
// that has not answered within a second is lost); this only guards against
// a Source that never returns.
const pingTimeout = 10 * time.Second

// handler serves the admin endpoints.
type handler struct {
	src Source
	log *slog.Logger
}

func newHandler(src Source, reg *prometheus.Registry, log *slog.Logger) http.Handler {
	h := &handler{src: src, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.HandleFunc("GET /status", h.status)
	mux.HandleFunc("GET /ping", h.ping)
	if reg != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			Registry:          reg, // exports promhttp_metric_handler_errors_total
			EnableOpenMetrics: true,
		}))
	}
	return mux
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
	writeJSON(w, http.StatusOK, st.normalized())
}

func (h *handler) ping(w http.ResponseWriter, r *http.Request) {
	peer := r.URL.Query().Get("peer")
	if peer == "" {
		writeError(w, http.StatusBadRequest, "missing query parameter peer")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pingTimeout)
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
	out := make([]PingResult, len(res))
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
