package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/operator"
)

// cmdOperator runs the consumer-side operator (docs/operator.md).
func cmdOperator(args []string, stderr io.Writer) error {
	fs, cl := operator.NewFlagSet()
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if err := cl.Check(fs); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	o := cl.Options
	log, _ := newLogger(stderr, config.Log{Level: cl.LogLevel, Format: cl.LogFormat})
	o.Logger = log
	client.RouteClientLogs(log) // process-wide: client-go's own logs
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := operator.Run(ctx, o)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
