package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// newLogger returns the process's logger at the given level and sends
// klog (Liqo's code) and controller-runtime through it, each with its own
// component attribute. klog's -v still gates klog's verbose lines.
func newLogger(level, role string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--standin-log-level %q: %w", level, err)
	}
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})
	base := slog.New(h).With("role", role)
	klog.SetSlogLogger(base.With("component", "liqo"))
	ctrllog.SetLogger(logr.FromSlogHandler(base.With("component", "controller-runtime").Handler()))
	return base.With("component", "geneve-standin"), nil
}
