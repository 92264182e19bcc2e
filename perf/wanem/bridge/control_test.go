package bridge

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/perf/wanem"
)

// fakeController records settings like a Bridge, without sockets.
type fakeController struct {
	mu sync.Mutex
	s  map[string]wanem.Settings
}

func newFake() *fakeController {
	return &fakeController{s: map[string]wanem.Settings{AB: {}, BA: {}}}
}

func (f *fakeController) Set(dir string, s wanem.Settings) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.s[dir]; !ok {
		return ErrNoDirection
	}
	if err := s.Validate(); err != nil {
		return err
	}
	f.s[dir] = s
	return nil
}

func (f *fakeController) Settings(dir string) (wanem.Settings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.s[dir]
	if !ok {
		return wanem.Settings{}, ErrNoDirection
	}
	return s, nil
}

func (f *fakeController) Stats() map[string]Stats {
	return map[string]Stats{AB: {Frames: map[string]uint64{"pass": 7}}, BA: {}}
}

var _ Controller = (*fakeController)(nil)

func TestControlOverUnixSocket(t *testing.T) {
	f := newFake()
	sock := filepath.Join(t.TempDir(), "ab.sock")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { served <- Serve(ctx, ln, f, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	c := NewClient(sock)
	defer c.Close()
	want := wanem.Settings{Delay: wanem.Duration(10 * time.Millisecond), Loss: 0.01, Rate: 100e6, Cut: true}
	if err := c.Set(ctx, AB, want); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := c.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[AB] != want || got[BA] != (wanem.Settings{}) {
		t.Errorf("settings %+v, want ab=%+v and ba zero", got, want)
	}
	st, err := c.Stats(ctx)
	if err != nil || st[AB].Frames["pass"] != 7 {
		t.Errorf("stats %+v, %v", st, err)
	}
	if err := c.Set(ctx, "xy", want); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown direction: %v, want 404", err)
	}
	bad := wanem.Settings{Loss: 2}
	if err := c.Set(ctx, BA, bad); err == nil || !strings.Contains(err.Error(), "probability") {
		t.Errorf("invalid settings: %v", err)
	}
	if s, _ := f.Settings(BA); s != (wanem.Settings{}) {
		t.Errorf("invalid settings were applied: %+v", s)
	}
}

func TestServeRemovesSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "x.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ln, err := Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	go func() { done <- Serve(ctx, ln, newFake(), nil) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(sock); len(m) != 0 {
		t.Errorf("socket %s left behind", sock)
	}
}
