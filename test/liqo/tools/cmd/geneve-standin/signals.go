package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// signalContext returns a context cancelled by the first SIGINT or SIGTERM,
// which starts the drain; a second signal exits the process at once. stop
// ends the watcher goroutine and must be called when the role returns.
func signalContext(log *slog.Logger) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case s := <-ch:
			log.Info("stopping: removing what the stand-in made", "signal", s.String())
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-ch:
			log.Warn("second signal: exiting now", "signal", s.String())
			os.Exit(1)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		<-exited
		cancel()
	}
}
