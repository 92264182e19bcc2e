package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/webhook"
)

func setupInject() (*flag.FlagSet, runFunc) {
	fs, cl := webhook.NewFlagSet(os.Getenv)
	return fs, func(inv *invocation) error {
		if err := cl.Check(fs); err != nil {
			return usageError{err.Error()}
		}
		return cmdInject(cl, inv.stderr)
	}
}

// cmdInject runs the sidecar-injection webhook and its per-gateway
// controller (docs/inject.md) until SIGINT or SIGTERM.
func cmdInject(cl *webhook.CommandLine, stderr io.Writer) error {
	o := cl.Options
	var h slog.Handler = slog.NewJSONHandler(stderr, nil)
	if cl.LogFormat == "text" {
		h = slog.NewTextHandler(stderr, nil)
	}
	o.Log = slog.New(h).With("component", "inject")
	client.RouteClientLogs(o.Log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return webhook.Run(ctx, o)
}
