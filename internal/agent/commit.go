package agent

import (
	"log/slog"

	"github.com/liqo-relay/relay/internal/core/config"

	"github.com/liqo-relay/relay/internal/core/failover"
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
	a.dp.pipe.SetRules(pl.rules)
	for _, st := range pl.removed {
		a.dp.paths.RemovePeer(st.cfg.Name)
		a.forgetHealth(st)
		delete(a.peers, st.cfg.Name)
	}
	for _, st := range pl.changed {
		name := st.cfg.Name
		old := a.old(name)
		if old != nil && a.rekeyed(st) {
			// A new WireGuard peer: its paths start their health afresh.
			// The Bind keeps the peer: WireGuard's new peer already holds
			// its endpoint.
			a.forgetHealth(old)
			old = nil
		}
		a.dp.paths.SetPeer(name, bindPaths(st))
		if a.dp.liqo != nil {
			if err := a.dp.liqo.setMapped(name, st.cfg.SeesUs); err != nil {
				a.log.Error("pinning the peer's mapped sources", "peer", name, "err", err)
			}
		}
		hs := healthSettings(st.cfg.Health)
		specs := make([]failover.PathSpec, len(st.cfg.Paths))
		for i, p := range st.cfg.Paths {
			specs[i] = failover.PathSpec{Name: p.Name, Bias: p.Bias}
			a.mon.SetPath(st.pathID(i), hs)
			a.mon.SetActive(st.pathID(i), i == st.active)
		}
		if old != nil {
			for j, p := range old.cfg.Paths {
				if pathIndex(st, p.Name) < 0 {
					a.mon.RemovePath(old.pathID(j))
					a.metrics.RemovePath(name, p.Name)
				}
			}
		}
		a.sel.SetPeer(name, specs, failoverSettings(st.cfg.Health))
		a.dp.paths.SetActive(name, st.active)
		// SetPeer keeps the secondary path by name: st.second says what
		// the Bind does, and the next round decides again.
		st.second = ""
		if s, ok := a.dp.paths.Secondary(name); ok {
			st.second = s.Name
		}
		a.peers[name] = st
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

// forgetHealth drops a peer's health, selection and metrics state.
func (a *Agent) forgetHealth(st *peerState) {
	for i := range st.cfg.Paths {
		a.mon.RemovePath(st.pathID(i))
	}
	a.sel.RemovePeer(st.cfg.Name)
	a.metrics.RemovePeer(st.cfg.Name)
}
