package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/dataplane/pipe"
)

// plan is a configuration change worked out in full, with nothing touched
// yet: apply checks everything it can here, then carries the plan out (see
// execute) and commits it.
type plan struct {
	cfg   *config.Config
	rules *pipe.Compiled
	// changed holds the new state of every added or changed peer, in
	// configuration order.
	changed []*peerState
	// removed holds the state of every peer the configuration drops,
	// sorted by name.
	removed []*peerState
	// next is our own staged next key, nil when none (rotation.go).
	next *ownNext
	// initial marks the first configuration, applied in New.
	initial bool
}

// old returns the running state of the peer called name, or nil.
func (a *Agent) old(name string) *peerState { return a.peers[name] }

// rekeyed reports whether st replaces a running peer of the same name
// under another public key: WireGuard sees a new peer, and the health and
// selection history of the old one do not carry over.
func (a *Agent) rekeyed(st *peerState) bool {
	old := a.old(st.cfg.Name)
	return old != nil && old.cfg.PublicKey != st.cfg.PublicKey
}

// prepare works out the change from the running configuration to cfg. It
// has no side effects. resolved holds the path endpoints of added and
// changed peers, resolved by the caller away from the owner goroutine;
// endpoints it lacks are only parsed as IP literals.
func (a *Agent) prepare(cfg *config.Config, resolved map[string][]pathState, initial bool) (*plan, error) {
	if !initial {
		a.liveOwnKey(cfg)
		if err := a.immutableChanges(cfg); err != nil {
			return nil, err
		}
	}
	rules, err := compileRules(cfg)
	if err != nil {
		return nil, err
	}
	pl := &plan{cfg: cfg, rules: rules, initial: initial}
	next, err := prepareNext(cfg, a.peers)
	if err != nil {
		return nil, err
	}
	pl.next = next
	for _, p := range cfg.Peers {
		old := a.old(p.Name)
		p = livePeer(p, old)
		if old != nil && old.cfg.Equal(p) {
			continue
		}
		key, err := health.NewPeerKey(cfg.PrivateKey, p.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("peers[%s].publicKey: %w", p.Name, err)
		}
		st := &peerState{cfg: p, key: key}
		if !p.NextPublicKey.IsZero() {
			if st.nextKey, err = health.NewPeerKey(cfg.PrivateKey, p.NextPublicKey); err != nil {
				return nil, fmt.Errorf("peers[%s].nextPublicKey: %w", p.Name, err)
			}
		}
		st.paths = resolved[p.Name]
		if len(st.paths) != len(p.Paths) {
			st.paths = a.literalPaths(p)
		}
		a.freshen(st)
		st.carried.started, st.carried.reachable = a.eng.Carried(st.spec())
		pl.changed = append(pl.changed, st)
	}
	for name, st := range a.peers {
		if _, ok := cfg.Peer(name); !ok {
			pl.removed = append(pl.removed, st)
		}
	}
	slices.SortFunc(pl.removed, func(x, y *peerState) int { return strings.Compare(x.cfg.Name, y.cfg.Name) })
	return pl, nil
}

// immutableChanges lists the settings that only a restart can change. The
// log level is live when the agent was given a LevelVar (Options.LogLevel).
func (a *Agent) immutableChanges(cfg *config.Config) error {
	old := a.cfg
	var bad []string
	if old.Name != cfg.Name {
		bad = append(bad, "name")
	}
	if old.PrivateKey != cfg.PrivateKey {
		bad = append(bad, "privateKey (to change the key in place, stage the new one as nextPrivateKey)")
	}
	if old.Mode != cfg.Mode {
		bad = append(bad, "mode")
	}
	if old.ListenPort != cfg.ListenPort {
		bad = append(bad, "listenPort")
	}
	if !slices.Equal(old.Addresses, cfg.Addresses) {
		bad = append(bad, "addresses")
	}
	if old.MTU != cfg.MTU {
		bad = append(bad, "mtu")
	}
	if cfg.Mode == config.ModeTUN && old.Tun != cfg.Tun {
		bad = append(bad, "tun")
	}
	if old.Liqo != cfg.Liqo {
		bad = append(bad, "liqo")
	}
	if cfg.Mode == config.ModeNetstack && old.Netstack != cfg.Netstack {
		bad = append(bad, "netstack")
	}
	if !slices.Equal(old.Exports, cfg.Exports) && cfg.Mode == config.ModeNetstack {
		bad = append(bad, "exports (netstack mode)")
	}
	if old.Admin != cfg.Admin {
		bad = append(bad, "admin")
	}
	if old.Log.Level != cfg.Log.Level && a.opts.LogLevel == nil {
		bad = append(bad, "log.level")
	}
	if old.Log.Format != cfg.Log.Format {
		bad = append(bad, "log.format")
	}
	if !dnsEqual(old.DNS, cfg.DNS) {
		bad = append(bad, "dns")
	}
	if !dnsServerEqual(old.DNSServer, cfg.DNSServer) {
		bad = append(bad, "dnsServer")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s cannot change while running: restart the relay to change them", strings.Join(bad, ", "))
	}
	return nil
}
