package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
)

// The hub of scale star runs in its own process, this binary run again as
// `scale hub`: it prints its admin address as one line on stdout, and
// runs until its stdin closes (or a signal), so it ends with its parent
// even when the parent is killed.

// hubStopTimeout is how long the star waits for the hub to stop after
// closing its stdin, before killing it.
const hubStopTimeout = 10 * time.Second

// adminPoll is how often the hub looks for its admin server's address,
// which Run sets once it listens.
const adminPoll = 10 * time.Millisecond

// hubProc is the hub's child process, seen from the star.
type hubProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *os.File // the read end of the hub's stdout
	addr  chan addrLine
}

// addrLine is the hub's first line of output, or why there was none.
type addrLine struct {
	addr string
	err  error
}

// startHub starts `scale hub` on the config file cfgPath, with the star's
// log level and the hub profile flags; its stderr is the star's.
func startHub(cfgPath string, o starOptions, stderr io.Writer) (*hubProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this binary to run the hub: %w", err)
	}
	args := []string{"hub", "--config", cfgPath, "--log", o.logLevel}
	if o.hubProfile != "" {
		args = append(args, "--profile", o.hubProfile, "--profile-delay", o.hubProfileDelay.String())
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = stderr
	// An os.Pipe rather than StdoutPipe: the address is read while the
	// hub runs, and Wait must not close the pipe under that read.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		_, _ = r.Close(), w.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_, _ = r.Close(), w.Close()
		return nil, fmt.Errorf("starting the hub: %w", err)
	}
	_ = w.Close() // the hub holds the write end now
	h := &hubProc{cmd: cmd, stdin: stdin, out: r, addr: make(chan addrLine, 1)}
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			err = fmt.Errorf("the hub stopped before giving its admin address: %w", err)
		}
		h.addr <- addrLine{strings.TrimSpace(line), err}
	}()
	return h, nil
}

// waitAddr returns the hub's admin address, once it printed it.
func (h *hubProc) waitAddr(ctx context.Context, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case l := <-h.addr:
		return l.addr, l.err
	case <-t.C:
		return "", fmt.Errorf("the hub gave no admin address within %s", timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop closes the hub's stdin, which stops it, and waits for it; a hub
// that does not stop within hubStopTimeout is killed.
func (h *hubProc) stop() error {
	_ = h.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(hubStopTimeout):
		_ = h.cmd.Process.Kill()
		<-done
		err = fmt.Errorf("the hub did not stop within %s: killed", hubStopTimeout)
	}
	_ = h.out.Close()
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	return nil
}

// cmdHub is `scale hub`: it runs the relay configured in --config, prints
// its admin address, and stops when stdin closes or ctx ends.
func cmdHub(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("hub", stderr)
	cfgPath := fs.String("config", "", "the hub's relay config (YAML)")
	profile := fs.String("profile", "", "write a CPU profile of this process to this file")
	delay := fs.Duration("profile-delay", 0, "start the profile this long after the relay")
	logLevel := fs.String("log", "off", "log level: off, debug, info, warn or error")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *cfgPath == "" {
		return fmt.Errorf("%w: hub needs --config", errUsage)
	}
	log, err := newLogger(*logLevel, stderr)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(*cfgPath)
	if err != nil {
		return err
	}
	cfg, err := config.Parse(b)
	if err != nil {
		return fmt.Errorf("%s: %w", *cfgPath, err)
	}
	a, err := agent.New(cfg, agent.Options{Logger: log, AdminAddr: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer a.Close() // for an agent whose Run never started
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var runErr error
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		runErr = a.Run(ctx)
	}()
	err = serveHub(ctx, cancel, a, ran, stdout, *profile, *delay)
	cancel()
	<-ran
	return errors.Join(err, runErr)
}

// serveHub announces the hub's admin address, then waits until stdin
// closes (it cancels ctx then), ctx ends, or the relay stops (ran closes),
// with the CPU profile running if one was asked for.
func serveHub(ctx context.Context, cancel context.CancelFunc, a *agent.Agent, ran <-chan struct{}, stdout io.Writer, profile string, delay time.Duration) error {
	for a.AdminAddr() == nil { // Run sets it once its admin server listens
		select {
		case <-ran:
			return errors.New("the relay stopped before its admin server listened")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(adminPoll):
		}
	}
	if _, err := fmt.Fprintln(stdout, a.AdminAddr()); err != nil {
		return err
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // until the star closes it
		cancel()
	}()
	if profile != "" {
		stop, err := startProfile(ctx, profile, delay)
		if err != nil {
			return err
		}
		defer stop()
	}
	select {
	case <-ctx.Done():
	case <-ran:
	}
	return nil
}

// startProfile starts a CPU profile into path after delay (past the
// settle burst: the steady state alone), unless ctx ends first; the
// function it returns stops it.
func startProfile(ctx context.Context, path string, delay time.Duration) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, delay); err != nil {
		return func() { _ = f.Close() }, nil
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
