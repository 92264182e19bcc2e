package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/liqo-relay/relay/internal/kube/webhook"
)

// standbyPoll is how often a relay with --standby-labels reads its pod's
// labels file. The kubelet rewrites downward API files only on its sync
// (about a minute), so a faster poll gains nothing; a second keeps the
// added delay small against that.
const standbyPoll = time.Second

// podActive reads the downward API labels file: true when the pod carries
// networking.liqo.io/active="true". A missing or unreadable file counts as
// passive: the relay never claims the direct path on a guess.
func podActive(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("reading the pod's labels: %w", err)
	}
	return webhook.ActiveInLabels(data)
}

// waitActive blocks until the pod is the active gateway replica, or ctx
// ends (then it returns ctx's error). Meanwhile it serves /healthz and
// /readyz on addr (admin.metricsListen; nothing when empty), so that a
// passive replica stays ready while its relay does nothing.
func waitActive(ctx context.Context, labels, addr string, log *slog.Logger) error {
	if ok, _ := podActive(labels); ok {
		return nil
	}
	log.Info("standby: the pod is not the active gateway replica; waiting", "labels", labels)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("standby: listening on admin.metricsListen %s: %w", addr, err)
		}
		mux := http.NewServeMux()
		ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok: standby (passive gateway replica)") }
		mux.HandleFunc("/healthz", ok)
		mux.HandleFunc("/readyz", ok)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		served := make(chan struct{})
		go func() {
			defer close(served)
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				log.Error("standby server", "err", err)
			}
		}()
		defer func() { _ = srv.Close(); <-served }()
	}
	tick := time.NewTicker(standbyPoll)
	defer tick.Stop()
	var lastErr string
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			active, err := podActive(labels)
			if err != nil && err.Error() != lastErr {
				log.Warn("standby", "err", err)
				lastErr = err.Error()
			}
			if active {
				log.Info("the pod became the active gateway replica: starting")
				return nil
			}
		}
	}
}

// watchPassive calls demoted once when the pod stops being the active
// replica, and returns; or returns when ctx ends.
func watchPassive(ctx context.Context, labels string, log *slog.Logger, demoted func()) {
	tick := time.NewTicker(standbyPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if active, err := podActive(labels); !active {
				log.Warn("the pod is no longer the active gateway replica: stopping (the container restarts in standby)", "err", err)
				demoted()
				return
			}
		}
	}
}
