package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"golang.zx2c4.com/wireguard/device"
)

// wireguardLogger adapts wireguard-go's printf logger to slog. Its verbose
// lines go to debug, its errors to warn: wireguard-go reports transient send
// failures (a path that just went down) as errors, and those are expected.
func wireguardLogger(log *slog.Logger) *device.Logger {
	l := log.With("component", "wireguard")
	return &device.Logger{
		Verbosef: func(format string, args ...any) {
			if l.Enabled(context.Background(), slog.LevelDebug) {
				l.Debug(strings.TrimSpace(fmt.Sprintf(format, args...)))
			}
		},
		Errorf: func(format string, args ...any) {
			l.Warn(strings.TrimSpace(fmt.Sprintf(format, args...)))
		},
	}
}
