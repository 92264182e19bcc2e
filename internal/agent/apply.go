package agent

import (
	"net/netip"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// peerState is the owner goroutine's view of one peer: what WireGuard,
// the probes and the metrics need. Its decision state (active path,
// reachability, session start, holds) lives in the engine.
type peerState struct {
	// cfg is the peer as WireGuard runs it: PublicKey is the key its
	// WireGuard peer has (once the peer switched to its NextPublicKey, that
	// one, see livePeer).
	cfg config.Peer
	key *health.PeerKey
	// nextKey is the probe key under the peer's NextPublicKey while one is
	// staged: it authenticates the peer's switch notice (rotation.go).
	nextKey *health.PeerKey
	paths   []pathState
	// carried is set in a plan: what the engine will keep of the running
	// peer when the plan commits (engine.Carried), with which WireGuard's
	// keepalive and the routes are planned. A running peer's own state is
	// the engine's (Agent.view).
	carried  carried
	bytesPub bytesPub // the byte counters last published (housemetrics.go)
}

type pathState struct {
	addr netip.AddrPort // resolved endpoint; invalid when resolution failed
	err  string         // why addr is invalid
	// sent is the path's probes-sent counter, looked up at its first
	// probe. A peerState (with its paths) is new whenever the path's
	// series may have been removed (commit), so it never outlives them.
	sent    metrics.ProbeCounter
	hasSent bool
	// rtt is the path's RTT series, looked up at its first answer, like sent.
	rtt    metrics.RTTObserver
	hasRTT bool
	// statsPub is what publishPathStats last exported (housemetrics.go),
	// stats the path's loss and outcome series, looked up at their first
	// export, like sent.
	statsPub pathStatsPub
	stats    metrics.PathStatsSeries
	hasStats bool
}

// carried is whether a peer's session has started and whether it is
// reachable.
type carried struct{ started, reachable bool }

// view is the engine's state of a running peer.
func (a *Agent) view(st *peerState) carried {
	v, _ := a.eng.Peer(st.cfg.Name)
	return carried{started: v.Started, reachable: v.Reachable}
}

// spec is the peer as the engine decides for it.
func (st *peerState) spec() engine.PeerSpec {
	addrs := make([]netip.AddrPort, len(st.paths))
	for i, p := range st.paths {
		addrs[i] = p.addr
	}
	return engine.SpecOf(st.cfg, addrs)
}

func bindPaths(st *peerState) []multipath.Path {
	out := make([]multipath.Path, len(st.paths))
	for i, p := range st.paths {
		out[i] = multipath.Path{Name: st.cfg.Paths[i].Name, Addr: p.addr}
	}
	return out
}

// healthSettings are the monitor's settings of a peer: config embeds
// health's own type, so this is the embedded value as it is.
func healthSettings(h config.Health) health.Settings { return h.Probing }

// failoverSettings are the selector's settings of a peer: config embeds
// failover's own type, so this is the embedded value as it is.
func failoverSettings(h config.Health) failover.Settings { return h.Selection }

// pathIndex returns the config index of the path called name, or -1.
func pathIndex(st *peerState, name string) int {
	for i, p := range st.cfg.Paths {
		if p.Name == name {
			return i
		}
	}
	return -1
}
