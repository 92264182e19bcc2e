// Command scale measures what probing costs when a relay has many peers
// and paths: the perf scenarios scale (perf/scenarios/scale.sh, a full mesh
// of netstack relays in one process) and scale-star (perf/scenarios/
// scale-star.sh, one hub relay in its own process with many idle spokes).
// Every relay runs on loopback with internal/demo/mesh's keys, ports and
// linkem hops, so it needs no root and no namespaces. It prints its figures
// to stderr and writes one run's result as JSON, which the scenario scripts
// merge into perf/results/. It is perf tooling, not part of the relay:
// `make perf-tools` and perf/run-all.sh build it into bin/scale.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `scale: probing cost of many peers and paths, on loopback (perf/)

Usage:
  scale mesh [--relays N] [--seconds S] [--health YAML] [--out FILE] [--log LEVEL]
        N netstack relays (20, 2 to 250) in this process, a full mesh with
        two paths per peer; measures the process over S seconds (20)
  scale star [--peers N] [--paths K] [--seconds S] [--health YAML] [--out FILE]
        [--hub-profile FILE [--hub-profile-delay D]] [--log LEVEL]
        one hub relay with N spokes (250) and K paths to each (4); the hub
        runs in a child process (scale hub) and is measured alone
  scale hub --config FILE [--profile FILE [--profile-delay D]] [--log LEVEL]
        the hub of scale star: runs one relay, prints its admin address on
        stdout, and stops when its stdin closes

--health is a YAML flow mapping for every relay's health: block (default
none). --out writes the result JSON to FILE ("-", the default, is stdout);
the figures go to stderr either way. --log sets the relays' log level
(off by default: debug, info, warn or error).
`

// errUsage marks errors that should be followed by the usage text.
var errUsage = errors.New("usage")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code: 2 for a
// usage error, 1 for any other.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "scale: %v\n\n%s", err, usage)
		return 2
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "scale: stopped by a signal")
		return 1
	default:
		fmt.Fprintf(stderr, "scale: %v\n", err)
		return 1
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no subcommand", errUsage)
	}
	switch args[0] {
	case "mesh":
		return cmdMesh(ctx, args[1:], stdout, stderr)
	case "star":
		return cmdStar(ctx, args[1:], stdout, stderr)
	case "hub":
		return cmdHub(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return fmt.Errorf("%w: unknown subcommand %q", errUsage, args[0])
	}
}

// common are the flags every measuring subcommand takes.
type common struct {
	seconds  int
	health   string
	out      string
	logLevel string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.IntVar(&c.seconds, "seconds", 20, "length of the measured window, seconds")
	fs.StringVar(&c.health, "health", "", "YAML flow mapping for every relay's health: block")
	fs.StringVar(&c.out, "out", "-", `file for the result JSON ("-": stdout)`)
	fs.StringVar(&c.logLevel, "log", "off", "relays' log level: off, debug, info, warn or error")
}

// newFlagSet returns a flag set that reports errors instead of exiting,
// with its usage going to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args into fs; a bad flag or a stray argument is a usage
// error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s: unexpected argument %q", errUsage, fs.Name(), fs.Arg(0))
	}
	return nil
}

// newLogger returns the relays' logger: discarded at "off", else text on
// stderr at the given level.
func newLogger(level string, stderr io.Writer) (*slog.Logger, error) {
	if level == "off" {
		return slog.New(slog.DiscardHandler), nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log %q: want off, debug, info, warn or error", errUsage, level)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}

// writeResult writes v as indented JSON with a final newline to path, or
// to stdout when path is "-". The scenario scripts read these fields, as
// do perf/table.sh and perf/gate.sh from the merged result.
func writeResult(path string, v any, stdout io.Writer) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// sleep waits d, or until ctx is done (a signal), and returns ctx's error
// then.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logf prints one line to stderr, stamped like perf/lib.sh's log lines.
func logf(stderr io.Writer, format string, args ...any) {
	fmt.Fprintf(stderr, "%s scale: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}
