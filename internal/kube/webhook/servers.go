package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// server is one of relay inject's HTTP servers and the address it listens
// on; tls serves it with the webhook's certificate.
type server struct {
	srv  *http.Server
	addr string
	tls  bool
}

// webhookServer serves h on WebhookPath over TLS with certs' certificate,
// at least TLS 1.2 (the API server's minimum).
func webhookServer(addr string, h http.Handler, certs *Certs, log *slog.Logger) server {
	mux := http.NewServeMux()
	mux.Handle(WebhookPath, h)
	return server{&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate},
		ErrorLog:  slog.NewLogLogger(log.Handler(), slog.LevelWarn)}, addr, true}
}

// metricsServer serves reg on /metrics.
func metricsServer(addr string, reg *prometheus.Registry) server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return server{&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, addr, false}
}

// healthServer serves /healthz, always ok, and /readyz, ok while ready
// reports true.
func healthServer(addr string, ready func() bool) server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "not ready: informers syncing or no certificate", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return server{&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, addr, false}
}

// listener is a server with its open listener.
type listener struct {
	server
	ln net.Listener
}

// listening are servers with their listeners, in the order given.
type listening []listener

// listen opens the listener of every server, or none: on a failure it
// closes those it opened.
func listen(srvs []server) (listening, error) {
	var out listening
	for _, s := range srvs {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			for _, x := range out {
				x.ln.Close()
			}
			return nil, fmt.Errorf("listening on %s: %w", s.addr, err)
		}
		out = append(out, listener{s, ln})
	}
	return out, nil
}

// addrs are the addresses the servers listen on.
func (l listening) addrs() []net.Addr {
	out := make([]net.Addr, len(l))
	for i, s := range l {
		out[i] = s.ln.Addr()
	}
	return out
}

// serve serves every server in a goroutine of wg until shutdown. A server
// that fails reports on the returned channel, which has room for all.
func (l listening) serve(wg *sync.WaitGroup) <-chan error {
	errc := make(chan error, len(l))
	for _, s := range l {
		wg.Go(func() {
			var err error
			if s.tls {
				err = s.srv.ServeTLS(s.ln, "", "")
			} else {
				err = s.srv.Serve(s.ln)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serving on %s: %w", s.ln.Addr(), err)
			}
		})
	}
	return errc
}

// shutdown shuts every server down, waiting up to grace in all for the
// requests in flight.
func (l listening) shutdown(grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, s := range l {
		_ = s.srv.Shutdown(ctx)
	}
}

// reconcileCerts keeps the certificates good until ctx ends or a server
// fails (errc): at every tick it calls reconcile with the tick's time and
// logs a failure, which the next tick retries.
func reconcileCerts(ctx context.Context, reconcile func(context.Context, time.Time) error, errc <-chan error, tick <-chan time.Time, log *slog.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case now := <-tick:
			if err := reconcile(ctx, now); err != nil {
				log.Error("certificates", "err", err)
			}
		}
	}
}
