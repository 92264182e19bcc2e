package agent

import (
	"log/slog"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
)

// apply makes cfg the running configuration, all or nothing: prepare checks
// everything that can be checked without touching anything, execute changes
// WireGuard and the routes and undoes its own steps when one fails, and
// commit, which cannot fail, updates the in-memory state. It runs on the
// owner goroutine (or in New, before there is one) and does no name
// resolution: resolved holds the endpoints of added and changed peers.
func (a *Agent) apply(cfg *config.Config, resolved map[string][]pathState, initial bool) error {
	pl, err := a.prepare(cfg, resolved, initial)
	if err != nil {
		return err
	}
	if err := a.execute(pl); err != nil {
		return err
	}
	a.commit(pl)
	return nil
}

// commit makes pl the running state. Nothing in it can fail.
func (a *Agent) commit(pl *plan) {
	now := a.clock.Now()
	a.dp.pipe.SetRules(pl.rules)
	for _, st := range pl.removed {
		a.dp.paths.RemovePeer(st.cfg.Name)
		a.carryOut(a.eng.Step(now, engine.RemovePeer{Name: st.cfg.Name}))
		delete(a.peers, st.cfg.Name)
	}
	for _, st := range pl.changed {
		name := st.cfg.Name
		// Under a new key the Bind keeps the peer: WireGuard's new peer
		// already holds its endpoint.
		a.dp.paths.SetPeer(name, bindPaths(st))
		if a.dp.liqo != nil {
			if err := a.dp.liqo.setMapped(name, st.cfg.SeesUs); err != nil {
				a.log.Error("pinning the peer's mapped sources", "peer", name, "err", err)
			}
		}
		a.peers[name] = st
		a.carryOut(a.eng.Step(now, engine.SetPeer{Spec: st.spec(), Initial: pl.initial}))
		for _, p := range st.cfg.Paths {
			a.metrics.PathConfigured(name, p.Name)
		}
	}
	a.cfg = pl.cfg
	a.gen++
	a.commitNext(pl.next, pl.cfg, a.clock.Now())
	a.publishProbeIndex()
	a.cur.Store(pl.cfg)
	a.dns.Retain(watchedHosts(pl.cfg))
	a.publishDNSView()
	if a.opts.LogLevel != nil {
		var level slog.Level
		if err := level.UnmarshalText([]byte(pl.cfg.Log.Level)); err == nil {
			a.opts.LogLevel.Set(level)
		}
	}
}
