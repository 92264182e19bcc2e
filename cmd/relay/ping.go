package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/status"
)

// pingRoundGap is the time from the start of one round of `relay ping
// --count N` to the start of the next: ping(8)'s interval, and the admin
// server's sustained rate (one ping a second after a burst of five), so
// that no count is refused for going too fast.
const pingRoundGap = time.Second

// pingSlack is how long a round's request may take beyond --timeout: the
// relay has to start the probes and send the answers back.
const pingSlack = 5 * time.Second

func setupPing() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("ping")
	var af adminFlags
	af.register(fs)
	count := fs.Int("count", 1, "`N` rounds of probes over every path, a second apart")
	timeout := fs.Duration("timeout", admin.MaxPingWait, "how long (`D`) each round waits for the answers, at most "+admin.MaxPingWait.String())
	asJSON := fs.Bool("json", false, "print JSON (for scripts): each round's result per path, and a summary per path")
	return fs, func(inv *invocation) error {
		switch {
		case *count < 1:
			return usagef("--count %d: want 1 or more", *count)
		case *timeout <= 0 || *timeout > admin.MaxPingWait:
			return usagef("--timeout %s: want more than 0 and at most %s (the relay waits no longer for a probe's answer)", *timeout, admin.MaxPingWait)
		}
		c, err := af.client()
		if err != nil {
			return err
		}
		// Ctrl-C ends the rounds; the ones done are still reported.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		p := pinger{client: c, peer: inv.args[0], count: *count, timeout: *timeout, clock: inv.clock}
		return cmdPing(ctx, p, *asJSON, inv.stdout)
	}
}

// pinger runs the rounds of one `relay ping`.
type pinger struct {
	client  admin.Client
	peer    string
	count   int
	timeout time.Duration
	clock   clock
}

// rounds asks the relay for p.count rounds, pingRoundGap apart, and calls
// each with every round's results as it comes. When ctx ends it returns
// the rounds done, without an error.
func (p pinger) rounds(ctx context.Context, each func([]status.PingResult)) ([][]status.PingResult, error) {
	out := [][]status.PingResult{}
	start := p.clock.Now()
	for i := range p.count {
		next := start.Add(time.Duration(i) * pingRoundGap)
		if i > 0 && p.clock.Sleep(ctx, next.Sub(p.clock.Now())) != nil {
			return out, nil
		}
		rctx, cancel := context.WithTimeout(ctx, p.timeout+pingSlack)
		res, err := p.client.PingWithin(rctx, p.peer, p.timeout)
		cancel()
		switch {
		case ctx.Err() != nil:
			return out, nil
		case err != nil:
			return out, withTokenHint(err)
		}
		out = append(out, res)
		each(res)
	}
	return out, nil
}

// pingReport is the output of `relay ping --json`.
type pingReport struct {
	Peer      string                `json:"peer"`
	TimeoutMs float64               `json:"timeoutMs"`
	Rounds    [][]status.PingResult `json:"rounds"` // per round, one result per path
	Paths     []pathSummary         `json:"paths"`
}

// pathSummary is what the rounds found on one path.
type pathSummary struct {
	Path     string `json:"path"`
	Sent     int    `json:"sent"`
	Answered int    `json:"answered"`
	// MinMs, AvgMs and MaxMs are over the answered rounds; 0 without any.
	MinMs float64 `json:"minMs"`
	AvgMs float64 `json:"avgMs"`
	MaxMs float64 `json:"maxMs"`
	// Error is why the last round had no answer on the path; "" when it
	// had one.
	Error string `json:"error"`
}

// cmdPing runs the rounds and prints them: each round as it comes and a
// summary after several, or one JSON report. It fails when no path
// answered in any round.
func cmdPing(ctx context.Context, p pinger, asJSON bool, stdout io.Writer) error {
	rounds, err := p.rounds(ctx, func(res []status.PingResult) {
		if !asJSON {
			admin.RenderPing(stdout, p.peer, res)
		}
	})
	if err != nil {
		return err
	}
	sum := summarize(rounds)
	switch {
	case asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		rep := pingReport{Peer: p.peer, TimeoutMs: float64(p.timeout.Microseconds()) / 1000, Rounds: rounds, Paths: sum}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	case p.count > 1:
		writePingSummary(stdout, p.peer, len(rounds), sum)
	}
	for _, s := range sum {
		if s.Answered > 0 {
			return nil
		}
	}
	return fmt.Errorf("no path to %s answered", p.peer)
}

// summarize folds the rounds into one summary per path, in the order the
// paths first appear.
func summarize(rounds [][]status.PingResult) []pathSummary {
	out := []pathSummary{}
	index := map[string]int{}
	for _, round := range rounds {
		for _, r := range round {
			i, ok := index[r.Path]
			if !ok {
				i = len(out)
				index[r.Path] = i
				out = append(out, pathSummary{Path: r.Path})
			}
			s := &out[i]
			s.Sent++
			if !r.OK {
				s.Error = r.Error
				continue
			}
			if s.Answered == 0 || r.RTTMs < s.MinMs {
				s.MinMs = r.RTTMs
			}
			s.MaxMs = max(s.MaxMs, r.RTTMs)
			s.AvgMs += (r.RTTMs - s.AvgMs) / float64(s.Answered+1)
			s.Answered++
			s.Error = ""
		}
	}
	return out
}

// writePingSummary writes the summary after several rounds.
func writePingSummary(w io.Writer, peer string, rounds int, sum []pathSummary) {
	fmt.Fprintf(w, "%s: %d rounds\n", peer, rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range sum {
		line := fmt.Sprintf("  %s\t%d/%d answered", s.Path, s.Answered, s.Sent)
		if s.Answered > 0 {
			line += fmt.Sprintf("\tmin %.2fms\tavg %.2fms\tmax %.2fms", s.MinMs, s.AvgMs, s.MaxMs)
		}
		if s.Error != "" {
			line += "\tlast: " + s.Error
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
