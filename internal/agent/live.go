package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/resolver"
)

// Apply makes cfg, a complete configuration, the running one while the
// relay runs, atomically: either every change is made (WireGuard peers,
// routes, packet rules, health and path selection, log level) or none is
// and the error says why. Peers it leaves unchanged are not disturbed.
//
// The error names what is wrong: an invalid configuration (every problem
// with its field path), a setting that only a restart can change, or the
// operation that failed (the peer and step) and whether rolling back
// worked. cfg is validated here; Apply keeps its own copy.
//
// Path endpoints given as host names of added and changed peers are
// looked up on the caller's goroutine (bounded by ctx and four times
// dns.timeout), before the change reaches the relay's owner goroutine, so
// probing never waits for DNS; from then on the relay keeps them fresh
// (dns.go). Calls are serialised. Every call counts in relay_config_reloads_total.
func (a *Agent) Apply(ctx context.Context, cfg *config.Config) error {
	err := a.applyLive(ctx, cfg)
	a.CountReload(err == nil)
	return err
}

// Reload is Apply without a deadline of its own (SIGHUP, tests).
func (a *Agent) Reload(cfg *config.Config) error {
	return a.Apply(context.Background(), cfg)
}

// ReloadFile reads, validates and applies the configuration file at path
// (LoadFile, then Apply). Any failure leaves the running configuration.
func (a *Agent) ReloadFile(ctx context.Context, path string) error {
	cfg, err := LoadFile(path)
	if err != nil {
		a.CountReload(false)
		return err
	}
	return a.Apply(ctx, cfg)
}

// CountReload records the outcome of a reload attempt in the metrics.
func (a *Agent) CountReload(ok bool) { a.metrics.ConfigReload(ok) }

func (a *Agent) applyLive(ctx context.Context, cfg *config.Config) error {
	if cfg == nil {
		return errors.New("agent: Apply: no configuration")
	}
	cfg = cfg.Clone()
	if cfg.PrivateKey.IsZero() {
		if err := ResolveKey(cfg); err != nil {
			return err
		}
	}
	if err := validateLoaded(cfg); err != nil {
		return err
	}
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, resolver.LookupTimeout(cfg.DNS))
	resolved := a.resolveChanged(rctx, a.cur.Load(), cfg)
	cancel()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("applying configuration: %w (nothing was changed)", err)
	}
	req := reloadReq{cfg: cfg, resolved: resolved, done: make(chan error, 1)}
	select {
	case a.reloadc <- req:
	case <-ctx.Done():
		return fmt.Errorf("applying configuration: %w (nothing was changed)", ctx.Err())
	case <-a.stopped:
		return errNotRunning
	}
	// The owner goroutine answers every request it took, before anything
	// else: no need to watch ctx or stopped here.
	return <-req.done
}

// validateLoaded validates cfg as read by LoadFile: its private key may
// have been filled in from privateKeyFile, which Validate would take for
// both being set.
func validateLoaded(cfg *config.Config) error {
	v := *cfg
	if !v.PrivateKey.IsZero() {
		v.PrivateKeyFile = ""
	}
	if err := v.Validate(); err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}
	return nil
}

// reloadReq carries a configuration into the owner goroutine, with its
// endpoints already resolved.
type reloadReq struct {
	cfg      *config.Config
	resolved map[string][]pathState
	done     chan error
}

// reload applies a configuration that arrives while running; it runs on the
// owner goroutine.
func (a *Agent) reload(req reloadReq) error {
	if err := a.apply(req.cfg, req.resolved, false); err != nil {
		return err
	}
	a.log.Info("configuration applied", "generation", a.gen, "peers", len(req.cfg.Peers))
	return nil
}
