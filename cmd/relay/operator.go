package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os/signal"
	"syscall"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/client"
	"github.com/liqo-relay/relay/internal/kube/consumer/operator"
)

func setupOperator() (*flag.FlagSet, runFunc) {
	fs, cl := operator.NewFlagSet()
	return fs, func(inv *invocation) error {
		if err := cl.Check(fs); err != nil {
			return usageError{err.Error()}
		}
		return cmdOperator(cl, inv.stderr)
	}
}

// cmdOperator runs the consumer-side operator (docs/operator.md).
func cmdOperator(cl *operator.CommandLine, stderr io.Writer) error {
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
