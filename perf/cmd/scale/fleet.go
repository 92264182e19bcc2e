package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// fleet is a set of relays running in this process, each with its admin
// server on an ephemeral loopback port.
type fleet struct {
	agents []*agent.Agent
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped []error // relays that stopped before close, with why
}

// startFleet starts one agent per relay, relay i from configs[i], and runs
// them until close. On an error it stops those it started.
func startFleet(relays []*mesh.Relay, configs []string, log *slog.Logger) (*fleet, error) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fleet{cancel: cancel}
	for i, r := range relays {
		cfg, err := config.Parse([]byte(configs[i]))
		if err != nil {
			_ = f.close()
			return nil, fmt.Errorf("config of %s: %w", r.Name, err)
		}
		a, err := agent.New(cfg, agent.Options{Logger: log.With("relay", r.Name), AdminAddr: "127.0.0.1:0"})
		if err != nil {
			_ = f.close()
			return nil, fmt.Errorf("starting %s: %w", r.Name, err)
		}
		f.agents = append(f.agents, a)
		name := r.Name
		f.wg.Go(func() {
			if err := a.Run(ctx); err != nil && ctx.Err() == nil {
				f.mu.Lock()
				f.stopped = append(f.stopped, fmt.Errorf("%s stopped: %w", name, err))
				f.mu.Unlock()
			}
		})
	}
	return f, nil
}

// failed reports the relays that stopped on their own so far.
func (f *fleet) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.stopped...)
}

// close stops every relay, waits for them, and returns failed's errors.
func (f *fleet) close() error {
	f.cancel()
	f.wg.Wait()
	for _, a := range f.agents {
		a.Close()
	}
	return f.failed()
}

// pathsUp counts, over every relay, the paths to its peers that are up.
func (f *fleet) pathsUp(ctx context.Context) int {
	up := 0
	for _, a := range f.agents {
		st, _ := a.Status(ctx)
		up += pathsUp(st)
	}
	return up
}

// admins returns every relay's admin address.
func (f *fleet) admins() ([]string, error) {
	out := make([]string, len(f.agents))
	for i, a := range f.agents {
		addr := a.AdminAddr()
		if addr == nil {
			return nil, fmt.Errorf("relay %d has no admin server", i)
		}
		out[i] = addr.String()
	}
	return out, nil
}

// settlePoll is how often the mesh looks at its relays' paths while they
// come up.
const settlePoll = 200 * time.Millisecond

// waitAllUp polls up every poll until it reports at least want paths up,
// and returns how long that took from start: the agent's state has no
// change notification, so polling the status is how to wait for it. A
// bound, not a speed assertion: relays whose paths do not all come up
// within bound fail the run.
func waitAllUp(ctx context.Context, start time.Time, want int, bound, poll time.Duration, up func() int) (time.Duration, error) {
	for {
		n := up()
		if n >= want {
			return time.Since(start), nil
		}
		if time.Since(start) > bound {
			return 0, fmt.Errorf("only %d of %d paths up after %s", n, want, bound)
		}
		if err := sleep(ctx, poll); err != nil {
			return 0, err
		}
	}
}

// settleRest is how long a measurement waits after every path came up:
// the first handshakes and the burst of probes that brought the paths up
// pass before the window opens.
const settleRest = 2 * time.Second

// window is one measured window: CPU seconds and probes sent by path name
// at both ends, and its length.
type window struct {
	cpu          float64 // CPU seconds spent in the window
	sent0, sent1 map[string]float64
	seconds      float64 // wall clock
}

// measureWindow waits settleRest, then reads cpu and sent, waits seconds,
// and reads them again.
func measureWindow(ctx context.Context, seconds int, cpu func() (float64, error), sent func() (map[string]float64, error)) (window, error) {
	var w window
	if err := sleep(ctx, settleRest); err != nil {
		return w, err
	}
	s0, err := sent()
	if err != nil {
		return w, err
	}
	c0, err := cpu()
	if err != nil {
		return w, err
	}
	t0 := time.Now()
	if err := sleep(ctx, time.Duration(seconds)*time.Second); err != nil {
		return w, err
	}
	c1, err := cpu()
	if err != nil {
		return w, err
	}
	t1 := time.Now()
	s1, err := sent()
	if err != nil {
		return w, err
	}
	return window{cpu: c1 - c0, sent0: s0, sent1: s1, seconds: t1.Sub(t0).Seconds()}, nil
}
