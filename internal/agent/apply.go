package agent

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// peerState is the owner goroutine's view of one peer.
type peerState struct {
	// cfg is the peer as WireGuard runs it: PublicKey is the key its
	// WireGuard peer has (once the peer switched to its NextPublicKey, that
	// one, see livePeer).
	cfg config.Peer
	key *health.PeerKey
	// nextKey is the probe key under the peer's NextPublicKey while one is
	// staged: it authenticates the peer's switch notice (rotation.go).
	nextKey   *health.PeerKey
	paths     []pathState
	active    int  // config index of the path WireGuard's traffic takes
	started   bool // the first path came up and the first handshake went out
	hsReason  string
	deferred  *deferredHandshake // a handshake we leave to the peer first
	slots     []int              // config index -> stable path slot (health ids, probe path field)
	nextSlot  int
	reachable bool
	// heldAt is when we started holding our handshake initiations to the
	// peer after a key switch; zero when not held (rotation.go).
	heldAt   time.Time
	rxSeen   map[netip.AddrPort]uint64 // passive evidence: packets seen per source
	traffic  trafficState              // idleness (demand.go)
	dup      failover.Duplicator       // redundant sending (redundancy.go)
	second   string                    // the path copies go to; "" none
	moveGap  time.Duration             // the reorder gap of the last move (steer.go)
	bytesPub bytesPub                  // the byte counters last published (housemetrics.go)
}

type pathState struct {
	addr     netip.AddrPort // resolved endpoint; invalid when resolution failed
	err      string         // why addr is invalid
	observed netip.AddrPort // where this path's answers come from (differs behind NAT)
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

// assignSlots gives every path of st a stable slot: a path keeps its slot
// across reloads as long as its name stays, so reordering paths keeps their
// health history and in-flight probes stay attributable.
func assignSlots(st, old *peerState) {
	st.slots = make([]int, len(st.cfg.Paths))
	if old != nil {
		st.nextSlot = old.nextSlot
	}
	for i, p := range st.cfg.Paths {
		st.slots[i] = -1
		if old != nil {
			if j := pathIndex(old, p.Name); j >= 0 {
				st.slots[i] = old.slots[j]
				st.paths[i].observed = old.paths[j].observed
			}
		}
	}
	for i := range st.slots {
		if st.slots[i] < 0 {
			st.slots[i] = st.nextSlot
			st.nextSlot++
		}
	}
}

// indexOfSlot maps a slot back to the config index, or -1.
func (st *peerState) indexOfSlot(slot int) int {
	for i, s := range st.slots {
		if s == slot {
			return i
		}
	}
	return -1
}

// pathID is the health monitor's id of the path at config index i.
func (st *peerState) pathID(i int) health.PathID {
	return health.PathID{Peer: st.cfg.Name, Path: st.slots[i]}
}
