package agent_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// logTap is a slog.Handler that passes records on and remembers the
// messages of interest, prefixed by the relay they came from, so a test
// can check that a relay noticed something it only logs.
type logTap struct {
	next  slog.Handler
	relay string
	want  []string
	mu    *sync.Mutex
	seen  *[]string
}

func newLogTap(next slog.Handler, want ...string) *logTap {
	return &logTap{next: next, want: want, mu: &sync.Mutex{}, seen: new([]string)}
}

func (h *logTap) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.next.Enabled(ctx, l)
}

func (h *logTap) Handle(ctx context.Context, r slog.Record) error {
	if slices.Contains(h.want, r.Message) {
		h.mu.Lock()
		*h.seen = append(*h.seen, h.relay+": "+r.Message)
		h.mu.Unlock()
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logTap) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	for _, a := range as {
		if a.Key == "relay" {
			c.relay = a.Value.String()
		}
	}
	return &c
}

func (h *logTap) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}

// has reports whether entry ("relay: message") was logged.
func (h *logTap) has(entry string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Contains(*h.seen, entry)
}
