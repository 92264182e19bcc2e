package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newRegistry is the operator's metrics registry: the Go and process
// collectors and relay_operator_leader, which it returns to be set.
func newRegistry() (*prometheus.Registry, prometheus.Gauge) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	leader := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "relay", Subsystem: "operator", Name: "leader",
		Help: "1 while this replica holds the Lease and runs the controller.",
	})
	reg.MustRegister(leader)
	return reg, leader
}

// metricsHandler serves reg on /metrics.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// healthHandler serves /healthz, always ok, and /readyz, ok once ready
// reports true: when this replica either runs the controller with synced
// caches, or stands by for the Lease.
func healthHandler(ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready\n", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// serve serves h on addr in goroutines of wg until ctx is done, then shuts
// the server down within 2s. An empty addr serves nothing. A server that
// fails after it started reports on errs.
func serve(ctx context.Context, wg *sync.WaitGroup, addr string, h http.Handler, errs chan<- error) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	})
	return nil
}
