// Command wanem is the userspace WAN emulator of the perf/ testbed: an L2
// bridge over AF_PACKET sockets between two interfaces, with delay, jitter,
// loss, bursty loss, rate limits and cuts per direction (perf/wanem decides,
// perf/wanem/bridge moves the frames). It is test tooling, not part of the
// relay: `make perf` builds it into bin/wanem.
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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/liqo-relay/relay/perf/wanem"
	"github.com/liqo-relay/relay/perf/wanem/bridge"
)

// wanemUsage documents the command.
const wanemUsage = `wanem: userspace WAN emulator (L2 bridge over AF_PACKET) for perf/

Usage:
  wanem run --a IF --b IF (--link NAME | --control SOCK) [--seed N] [--queue FRAMES]
        bridge interfaces A and B in this namespace until SIGINT/SIGTERM
  wanem set (--link NAME | --control SOCK) [--dir ab|ba|both] [--reset]
        [--delay D] [--jitter D] [--loss P] [--burst P,R[,LOSSBAD[,LOSSGOOD]]|--burst off]
        [--rate R] [--backlog D] [--cut | --restore]
        change only the settings named (--reset starts from a perfect wire)
  wanem show (--link NAME | --control SOCK)
        print settings and counters as JSON
  wanem offloads-off IF...
        turn off checksum offload, SG, TSO, GSO, GRO (like ethtool -K)

--link NAME uses the socket --ctl-dir/NAME.sock (default dir $WANEM_DIR or
/run/liqo-relay-wanem). Direction ab carries frames arriving on A out of B.
`

const defaultWanemDir = "/run/liqo-relay-wanem"

// errUsage marks errors that should be followed by the usage text.
var errUsage = errors.New("usage")

// exitError carries a specific exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one wanem command and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	err := cmdWanem(args, stdout, stderr)
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "wanem: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "wanem: %v\n", err)
		return 1
	}
}

func cmdWanem(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, wanemUsage)
		return exitError{2}
	}
	switch args[0] {
	case "run":
		return wanemRun(args[1:], stderr)
	case "set":
		return wanemSet(args[1:], stderr)
	case "show":
		return wanemShow(args[1:], stdout, stderr)
	case "offloads-off":
		for _, n := range args[1:] {
			if err := bridge.DisableOffloads(n); err != nil {
				return err
			}
		}
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, wanemUsage)
		return nil
	}
	fmt.Fprint(stderr, wanemUsage)
	return fmt.Errorf("%w: unknown wanem command %q", errUsage, args[0])
}

// controlFlags registers --link, --ctl-dir and --control; the returned
// function resolves them to a socket path.
func controlFlags(fs *flag.FlagSet) func() (string, error) {
	link := fs.String("link", "", "link name: control socket CTL-DIR/NAME.sock")
	dir := fs.String("ctl-dir", "", "directory of link sockets (default $WANEM_DIR or "+defaultWanemDir+")")
	sock := fs.String("control", "", "control socket path")
	return func() (string, error) {
		switch {
		case *sock != "" && *link != "":
			return "", fmt.Errorf("%w: give --link or --control, not both", errUsage)
		case *sock != "":
			return *sock, nil
		case *link == "":
			return "", fmt.Errorf("%w: --link or --control is required", errUsage)
		}
		d := *dir
		if d == "" {
			d = os.Getenv("WANEM_DIR")
		}
		if d == "" {
			d = defaultWanemDir
		}
		return filepath.Join(d, *link+".sock"), nil
	}
}

func wanemRun(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("wanem run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a := fs.String("a", "", "interface A")
	b := fs.String("b", "", "interface B")
	seed := fs.Uint64("seed", 0, "random seed (0: random)")
	queue := fs.Int("queue", 0, "frames per direction's delay line (0: default)")
	sockPath := controlFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	sock, err := sockPath()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("link", strings.TrimSuffix(filepath.Base(sock), ".sock"))
	br, err := bridge.New(bridge.Config{A: *a, B: *b, Seed: *seed, QueueFrames: *queue, Logger: log})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		return err
	}
	ln, err := bridge.Listen(sock)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- bridge.Serve(ctx, ln, br, log) }()
	runErr := br.Run(ctx)
	stop()
	return errors.Join(runErr, <-served)
}

// setChange is what one `wanem set` changes: the flags given, parsed.
type setChange struct {
	dirs     []string
	reset    bool
	given    map[string]bool
	delay    time.Duration
	jitter   time.Duration
	loss     float64
	burst    *wanem.GilbertElliott
	burstOff bool
	rate     wanem.Rate
	backlog  time.Duration
	cut      bool
	restore  bool
}

func wanemSet(args []string, stderr io.Writer) error {
	sock, ch, err := parseSet(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := bridge.NewClient(sock)
	defer c.Close()
	cur, err := c.Settings(ctx)
	if err != nil {
		return err
	}
	for _, d := range ch.dirs {
		if err := c.Set(ctx, d, ch.apply(cur[d])); err != nil {
			return err
		}
	}
	return nil
}

// parseSet parses `wanem set`'s flags into the control socket's path and
// the change to make.
func parseSet(args []string, stderr io.Writer) (string, setChange, error) {
	fs := flag.NewFlagSet("wanem set", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sockPath := controlFlags(fs)
	var ch setChange
	dir := fs.String("dir", "both", "direction: ab, ba or both")
	fs.BoolVar(&ch.reset, "reset", false, "start from a perfect wire instead of the current settings")
	fs.DurationVar(&ch.delay, "delay", 0, "one-way delay")
	fs.DurationVar(&ch.jitter, "jitter", 0, "uniform jitter (at most --delay)")
	fs.Float64Var(&ch.loss, "loss", 0, "random loss probability 0..1")
	burst := fs.String("burst", "", "Gilbert-Elliott loss P,R[,LOSSBAD[,LOSSGOOD]] (LOSSBAD default 1), or off")
	rate := fs.String("rate", "", "rate limit like 100mbit (0: none)")
	fs.DurationVar(&ch.backlog, "backlog", 0, "rate limiter queue as time at the rate (0: default 50ms)")
	fs.BoolVar(&ch.cut, "cut", false, "drop everything")
	fs.BoolVar(&ch.restore, "restore", false, "undo --cut")
	if err := fs.Parse(args); err != nil {
		return "", ch, exitError{2}
	}
	sock, err := sockPath()
	if err != nil {
		return "", ch, err
	}
	if ch.cut && ch.restore {
		return "", ch, fmt.Errorf("%w: --cut and --restore together", errUsage)
	}
	switch *dir {
	case "both":
		ch.dirs = []string{bridge.AB, bridge.BA}
	case bridge.AB, bridge.BA:
		ch.dirs = []string{*dir}
	default:
		return "", ch, fmt.Errorf("%w: --dir %q: want ab, ba or both", errUsage, *dir)
	}
	if *burst == "off" {
		ch.burstOff = true
	} else if *burst != "" {
		if ch.burst, err = parseBurst(*burst); err != nil {
			return "", ch, err
		}
	}
	if *rate != "" {
		if ch.rate, err = wanem.ParseRate(*rate); err != nil {
			return "", ch, err
		}
	}
	ch.given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { ch.given[f.Name] = true })
	return sock, ch, nil
}

// apply returns s with the change made: only the settings whose flags were
// given change, from a perfect wire with --reset.
func (ch setChange) apply(s wanem.Settings) wanem.Settings {
	if ch.reset {
		s = wanem.Settings{}
	}
	if ch.given["delay"] {
		s.Delay = wanem.Duration(ch.delay)
	}
	if ch.given["jitter"] {
		s.Jitter = wanem.Duration(ch.jitter)
	}
	if ch.given["loss"] {
		s.Loss = ch.loss
	}
	if ch.burst != nil {
		s.Burst = ch.burst
	} else if ch.burstOff {
		s.Burst = nil
	}
	if ch.given["rate"] {
		s.Rate = ch.rate
	}
	if ch.given["backlog"] {
		s.Backlog = wanem.Duration(ch.backlog)
	}
	if ch.cut {
		s.Cut = true
	}
	if ch.restore {
		s.Cut = false
	}
	return s
}

func parseBurst(s string) (*wanem.GilbertElliott, error) {
	f := strings.Split(s, ",")
	if len(f) < 2 || len(f) > 4 {
		return nil, fmt.Errorf("%w: --burst %q: want P,R[,LOSSBAD[,LOSSGOOD]]", errUsage, s)
	}
	v := []float64{0, 0, 1, 0}
	for i, x := range f {
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: --burst %q: %v", errUsage, s, err)
		}
		v[i] = p
	}
	return &wanem.GilbertElliott{P: v[0], R: v[1], LossBad: v[2], LossGood: v[3]}, nil
}

func wanemShow(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("wanem show", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sockPath := controlFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	sock, err := sockPath()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := bridge.NewClient(sock)
	defer c.Close()
	set, err := c.Settings(ctx)
	if err != nil {
		return err
	}
	st, err := c.Stats(ctx)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"settings": set, "stats": st})
}
