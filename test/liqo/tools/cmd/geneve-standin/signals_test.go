package main

import (
	"syscall"
	"testing"
)

// The first SIGTERM cancels the context; stop ends the watcher.
func TestSignalContext(t *testing.T) {
	ctx, stop := signalContext(quietLog())
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	stop()
}

// stop without a signal ends the watcher and cancels the context.
func TestSignalContextStop(t *testing.T) {
	ctx, stop := signalContext(quietLog())
	stop()
	<-ctx.Done()
}
