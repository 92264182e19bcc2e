package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/webhook"
)

// cmdInject runs the sidecar-injection webhook and its per-gateway
// controller (docs/inject.md) until SIGINT or SIGTERM.
func cmdInject(args []string, stderr io.Writer) error {
	fs, cl := webhook.NewFlagSet(os.Getenv)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if err := cl.Check(fs); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
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
