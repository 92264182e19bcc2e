package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/liqo-relay/relay/internal/demo"
)

func setupDemo() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("demo")
	duration := fs.Duration("duration", 0, "stop by itself after this long (0: run until Ctrl-C)")
	plain := fs.Bool("plain", false, "print plain lines even on a terminal")
	verbose := fs.Bool("v", false, "log the relays' decisions to stderr")
	return fs, func(inv *invocation) error { return cmdDemo(*duration, *plain, *verbose, inv.stdout) }
}

// cmdDemo runs the in-process federation. Ctrl-C ends it within 2 s.
func cmdDemo(duration time.Duration, plain, verbose bool, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.DiscardHandler)
	if verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	_, err := demo.Run(ctx, demo.Options{
		Out:      stdout,
		TTY:      isTerminal(stdout) && !plain,
		Duration: duration,
		Logger:   log,
	})
	return err
}
