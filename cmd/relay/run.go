package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.zx2c4.com/wireguard/conn"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
)

// configFlag registers -c and --config on fs.
func configFlag(fs *flag.FlagSet) *string {
	p := fs.String("config", "", "configuration `FILE` (YAML)")
	fs.StringVar(p, "c", "", "shorthand for --config")
	return p
}

func setupCheck() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("check")
	path := configFlag(fs)
	return fs, func(inv *invocation) error { return cmdCheck(*path, inv.stdout, inv.stderr) }
}

func cmdCheck(path string, stdout, stderr io.Writer) error {
	if path == "" {
		return usagef("-c FILE is required")
	}
	cfg, err := agent.ParseFile(path)
	if err == nil && cfg.PrivateKeySecret.IsZero() {
		err = agent.ResolveKey(cfg) // a Secret-held key is read only by run
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	fmt.Fprintf(stdout, "%s: valid: relay %q, %s mode, %d peer(s)\n", path, cfg.Name, cfg.Mode, len(cfg.Peers))
	return nil
}

// newLogger returns the relay's logger and its level, which a reload of
// log.level changes (agent.Options.LogLevel).
func newLogger(w io.Writer, lc config.Log) (*slog.Logger, *slog.LevelVar) {
	level := new(slog.LevelVar)
	var l slog.Level
	if err := l.UnmarshalText([]byte(lc.Level)); err == nil {
		level.Set(l)
	}
	opts := &slog.HandlerOptions{Level: level}
	if lc.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), level
	}
	return slog.New(slog.NewTextHandler(w, opts)), level
}

// shutdownBudget bounds a clean shutdown; the contract is exit within 5 s.
const shutdownBudget = 4500 * time.Millisecond

// runFlags are the flags of `relay run`.
type runFlags struct {
	path    string
	kube    kubeOpts
	standby string    // the downward API labels file; "" without standby
	bind    conn.Bind // nil: the agent's default, udpbind
}

func setupRun() (*flag.FlagSet, runFunc) {
	fs := newFlagSet("run")
	path := configFlag(fs)
	kf := kubeFlags(fs)
	standby := fs.String("standby-labels", "", "a downward API `FILE` of the pod's labels: run only while the pod is the active Liqo gateway replica (docs/inject.md)")
	sockets := fs.String("sockets", "batch", "the UDP sockets under WireGuard: batch (liqo-relay's: probes to many peers in one system call) or std (wireguard-go's StdNetBind); docs/performance.md")
	return fs, func(inv *invocation) error {
		f := runFlags{path: *path, kube: kf, standby: *standby}
		switch *sockets {
		case "batch":
		case "std":
			f.bind = conn.NewStdNetBind()
		default:
			return usagef("--sockets %q: want batch or std", *sockets)
		}
		if f.path == "" {
			return usagef("-c FILE is required")
		}
		return cmdRun(f, inv.stderr)
	}
}

// cmdRun runs the relay until SIGINT or SIGTERM. SIGHUP re-reads the
// configuration; an invalid one is reported and the running one stays. A
// second SIGINT/SIGTERM during shutdown exits at once.
func cmdRun(f runFlags, stderr io.Writer) error {
	cfg, err := agent.ParseFile(f.path)
	if err != nil {
		return err
	}
	log, level := newLogger(stderr, cfg.Log)
	log = log.With("relay", cfg.Name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if f.standby != "" {
		if active, err := waitStandby(ctx, f.standby, cfg, log); !active {
			return err
		}
	}
	kube, err := startKubeMode(ctx, f, cfg, log)
	if err != nil {
		return err
	}
	if err := agent.ResolveKey(cfg); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	// The private key prints as [redacted] (keys.Private).
	log.Debug("configuration loaded", "path", f.path, "config", cfg)

	m := metrics.New()
	a, err := agent.New(cfg, agent.Options{Logger: log, LogLevel: level, Metrics: m, Bind: f.bind})
	if err != nil {
		return err
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if f.standby != "" {
		// Demoted: stop as on SIGTERM (the watcher ends with ctx).
		go watchPassive(ctx, f.standby, log, func() {
			select {
			case sigs <- syscall.SIGTERM:
			default:
			}
		})
	}
	var reloadFn func() = func() { reload(a, f.path, log) }
	if kube != nil {
		kdone, err := kube.run(ctx, cfg, a, m, log)
		if err != nil {
			cancel()
			<-done
			return err
		}
		defer func() { cancel(); <-kdone }() // also when the relay stops on its own
		reloadFn = func() { kube.reload(ctx, f.path, log) }
	}
	return superviseRun(ctx, cancel, done, sigs, reloadFn, log)
}

// waitStandby waits until the pod is the active gateway replica (labels
// is its downward API file). active is false when the relay is to stop
// instead: with a nil error after SIGINT or SIGTERM in standby.
func waitStandby(ctx context.Context, labels string, cfg *config.Config, log *slog.Logger) (active bool, err error) {
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	err = waitActive(sctx, labels, cfg.Admin.MetricsListen, log)
	stop()
	if err != nil {
		if ctx.Err() == nil && sctx.Err() != nil {
			log.Info("stopped in standby")
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// startKubeMode starts Kubernetes mode when its flags ask for it, and
// refuses the flags and settings that need it otherwise. kube is nil
// outside Kubernetes mode.
func startKubeMode(ctx context.Context, f runFlags, cfg *config.Config, log *slog.Logger) (kube *kubeMode, err error) {
	switch {
	case f.kube.enabled():
		return startKube(ctx, f.kube, cfg, log)
	case *f.kube.dnsListen != "" || *f.kube.consumer != "":
		return nil, usagef("--dns-listen and --consumer-cluster-id need Kubernetes mode (--kubeconfig FILE or --kubernetes)")
	case !cfg.PrivateKeySecret.IsZero():
		return nil, fmt.Errorf("%s: privateKeySecret needs Kubernetes mode: add --kubeconfig FILE or --kubernetes", f.path)
	}
	return nil, nil
}

// superviseRun waits for the relay to stop (done) while serving signals:
// SIGHUP calls reloadFn; the first SIGINT or SIGTERM cancels the relay's
// context and bounds the shutdown by shutdownBudget, a second one exits at
// once.
func superviseRun(ctx context.Context, cancel context.CancelFunc, done <-chan error, sigs <-chan os.Signal, reloadFn func(), log *slog.Logger) error {
	for {
		select {
		case err := <-done:
			return err
		case s := <-sigs:
			switch s {
			case syscall.SIGHUP:
				reloadFn()
			default:
				if ctx.Err() != nil {
					log.Warn("second signal: exiting now")
					return exitError{130}
				}
				log.Info("shutting down", "signal", s.String())
				cancel()
				// Run removes what it created; bound how long we wait.
				time.AfterFunc(shutdownBudget, func() {
					log.Error("shutdown did not finish in time: exiting", "budget", shutdownBudget)
					os.Exit(1)
				})
			}
		}
	}
}

// reload re-reads the configuration file and applies it as a whole. A
// failed reload leaves the running configuration, unless rolling back a
// failed change failed too.
func reload(a *agent.Agent, path string, log *slog.Logger) {
	err := a.ReloadFile(context.Background(), path)
	switch {
	case errors.Is(err, agent.ErrRollbackFailed):
		log.Error("reload failed and could not be fully rolled back", "err", err)
	case err != nil:
		log.Error("reload rejected: keeping the running configuration", "err", err)
	}
}
