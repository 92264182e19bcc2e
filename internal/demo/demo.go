package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// Options configure a demo run.
type Options struct {
	Out io.Writer
	// TTY redraws a live screen; otherwise the demo prints plain lines that
	// say the same (no cursor control).
	TTY bool
	// Duration ends the demo by itself; 0 runs until ctx is done.
	Duration time.Duration
	// Warmup is how long traffic runs on the direct path before the first
	// cut; Cut and Restore are how long the link stays cut and then
	// restored in each cycle.
	Warmup, Cut, Restore time.Duration
	Latencies            Latencies
	// Health is an optional YAML flow mapping for the relays' `health:`,
	// without redundancy: the demo alternates it, every other cut with
	// redundancy duplicate.
	Health string
	Logger *slog.Logger
}

// Defaults fills in the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Latencies == (Latencies{}) {
		o.Latencies = DefaultLatencies
	}
	if o.Warmup == 0 {
		o.Warmup = 5 * time.Second
	}
	if o.Cut == 0 {
		o.Cut = 8 * time.Second
	}
	if o.Restore == 0 {
		o.Restore = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// Report is what a demo run measured.
type Report struct {
	Cuts int
	// Silences holds, per cut, the longest silences the TCP application
	// saw (its echoes stopped arriving) at that cut and at its failback,
	// with the redundant sending the cut met.
	Silences     []CutSilence
	Switches     []status.Event // provider-a's path switches for provider-b
	Sent, Echoed uint64
}

// Run runs the demo until ctx is done or Duration has passed, and tears
// everything down before it returns.
func Run(ctx context.Context, o Options) (rep Report, err error) {
	o = o.withDefaults()
	if strings.Contains(o.Health, "redundancy") {
		return rep, fmt.Errorf("demo: Options.Health %q sets redundancy: the demo sets it itself, off and duplicate on alternate cuts", o.Health)
	}
	f, err := build(o.Latencies, o.Health, o.Logger)
	if err != nil {
		return rep, err
	}
	defer f.close()

	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	v := newView(o, f)
	v.phase = "waiting for the relays to find each other"
	if err := v.waitReachable(ctx); err != nil {
		return rep, nil // interrupted before traffic started: nothing to report
	}

	conn, err := f.Relay("provider-a").Agent.DialContext(ctx, "tcp", echoAddr)
	if err != nil {
		return rep, fmt.Errorf("connecting the pod behind provider-a to the echo pod %s behind provider-b: %w", echoAddr, err)
	}
	s := startStream(conn)
	defer s.close()
	v.stream = s

	start := time.Now()
	next := start.Add(o.Warmup)
	cut, cuts, mode := false, 0, redundancyFor(1)
	v.phase = fmt.Sprintf("traffic on the direct path; cutting the direct A-B link in %s", o.Warmup)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			v.final()
			return v.report(), nil
		case now := <-tick.C:
			if !now.Before(next) {
				cut = !cut
				f.cutDirect(cut)
				if cut {
					v.steps = append(v.steps, step{at: now, cut: true, redundancy: mode})
					next = now.Add(o.Cut)
					v.phase = fmt.Sprintf("direct A-B link CUT (redundancy %s): traffic must move to the consumer path; restoring in %s", mode, o.Cut)
				} else {
					cuts++
					// The next cut meets the other redundancy; the failback
					// runs under it already.
					if m := redundancyFor(cuts + 1); m != mode {
						if err := f.setRedundancy(ctx, mode, m); err != nil {
							o.Logger.Error("demo: setting the relays' redundancy", "redundancy", m, "err", err)
						} else {
							mode = m
						}
					}
					v.steps = append(v.steps, step{at: now, redundancy: mode})
					next = now.Add(o.Restore)
					v.phase = fmt.Sprintf("direct A-B link restored: failback after it has stayed up a while; cutting again in %s, with redundancy %s", o.Restore, mode)
				}
				v.announce()
			}
			v.draw(now)
		}
	}
}

// waitReachable waits until provider-a reaches provider-b.
func (v *view) waitReachable(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		st, _ := v.f.Relay("provider-a").Agent.Status(ctx) // an error: not yet, poll again
		for _, p := range st.Peers {
			if p.Name == "provider-b" && p.Reachable && !p.LastHandshake.IsZero() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("interrupted")
		case now := <-t.C:
			v.draw(now)
		}
	}
}
