package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/liqo-relay/relay/perf/wanem"
)

// Direction names: "ab" carries frames that arrive on port A out of port
// B, "ba" the reverse.
const (
	AB = "ab"
	BA = "ba"
)

// Config says what to bridge.
type Config struct {
	A, B string // interface names, in the namespace the Bridge is created in
	// Seed makes the random draws (loss, jitter) repeatable; 0 picks one.
	Seed uint64
	// QueueFrames bounds each direction's delay line; 0 means
	// DefaultQueueFrames.
	QueueFrames int
	Logger      *slog.Logger
}

// DefaultQueueFrames holds 100 ms of full-size frames at 1 Gbit/s: enough
// for the delays and rates a WAN testbed uses. Slot buffers are allocated
// only as the queue first grows.
const DefaultQueueFrames = 8192

// Bridge bridges two interfaces through two emulated directions.
type Bridge struct {
	a, b *port
	dirs map[string]*pump
	log  *slog.Logger
}

// New opens both ports in the caller's namespace (sockets keep the
// namespace they were made in, so the caller may then run the bridge from
// any thread) and disables their offloads. Both directions start as a
// perfect wire.
func New(cfg Config) (*Bridge, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.A == "" || cfg.B == "" || cfg.A == cfg.B {
		return nil, fmt.Errorf("bridge needs two different interfaces, got %q and %q", cfg.A, cfg.B)
	}
	nq := cfg.QueueFrames
	if nq <= 0 {
		nq = DefaultQueueFrames
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	for _, n := range []string{cfg.A, cfg.B} {
		if err := DisableOffloads(n); err != nil {
			return nil, err
		}
	}
	a, err := openPort(cfg.A)
	if err != nil {
		return nil, err
	}
	b, err := openPort(cfg.B)
	if err != nil {
		_ = a.close()
		return nil, err
	}
	// Room for the largest frame either side may send, with a VLAN tag.
	slot := max(a.mtu, b.mtu) + 14 + 4
	now := time.Now()
	br := &Bridge{a: a, b: b, log: log.With("component", "wanem"), dirs: map[string]*pump{
		AB: newPump(AB, a, b, rand.New(rand.NewPCG(seed, 1)), nq, slot, now),
		BA: newPump(BA, b, a, rand.New(rand.NewPCG(seed, 2)), nq, slot, now),
	}}
	br.log.Info("bridge open", "a", cfg.A, "b", cfg.B, "seed", seed, "queueFrames", nq, "slot", slot)
	return br, nil
}

// Run moves frames until ctx ends, then closes the ports.
func (br *Bridge) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, p := range br.dirs {
		wg.Add(2)
		go func() { defer wg.Done(); p.reader(ctx, br.log) }()
		go func() { defer wg.Done(); p.writer(ctx, br.log) }()
	}
	wg.Wait()
	return errors.Join(br.a.close(), br.b.close())
}

// ErrNoDirection is returned for a direction other than AB or BA.
var ErrNoDirection = errors.New("no such direction (ab or ba)")

// Set changes a direction's settings at once.
func (br *Bridge) Set(dir string, s wanem.Settings) error {
	p, ok := br.dirs[dir]
	if !ok {
		return fmt.Errorf("%q: %w", dir, ErrNoDirection)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	p.set(s, time.Now())
	br.log.Info("settings", "dir", dir, "delay", s.Delay, "jitter", s.Jitter, "loss", s.Loss,
		"burst", s.Burst != nil, "rate", s.Rate, "cut", s.Cut)
	return nil
}

// Settings returns a direction's settings.
func (br *Bridge) Settings(dir string) (wanem.Settings, error) {
	p, ok := br.dirs[dir]
	if !ok {
		return wanem.Settings{}, fmt.Errorf("%q: %w", dir, ErrNoDirection)
	}
	return p.settings(), nil
}

// Stats returns both directions' counters.
func (br *Bridge) Stats() map[string]Stats {
	out := make(map[string]Stats, len(br.dirs))
	for n, p := range br.dirs {
		out[n] = p.stats()
	}
	return out
}
