package engine

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// Ready is what one Step asks of the shell, to be carried out in the order
// of its fields (the metric series of Forget and RemovedPaths may go
// first): probes, then moves, routes, keepalives, handshakes and holds, a
// key switch last. Its slices are the engine's own and valid until the
// next Step.
type Ready struct {
	// Probes are the requests to send now, each to its path's address.
	Probes []Probe
	// Due are the probes the monitor scheduled that were sent or had no
	// address (not those replaced by traffic), for the send-delay metric.
	Due []health.Probe
	// Stalled is the stall of the relay that a Stall input counted (zero:
	// none, or timer slop below MinStall).
	Stalled time.Duration
	// RTTs are the round-trip times the replies of this step measured.
	RTTs []RTT
	// Paths are the paths that came up or went down.
	Paths []PathChange
	// Switches are the path selections made, in order.
	Switches []failover.Event
	// Moves tell the Bind which paths carry a peer's traffic.
	Moves []Move
	// Routes are peers that became reachable or unreachable.
	Routes []Route
	// Redundancy are the changes of a peer's redundant sending.
	Redundancy []Redundancy
	// Restarts are peers that restarted (their probe epoch changed).
	Restarts []string
	// Keepalives are the peers whose persistent keepalive is to be set now.
	Keepalives []string
	// Handshakes are the WireGuard handshakes to initiate now.
	Handshakes []Handshake
	// Holds start or end the holding of our handshake initiations.
	Holds []Hold
	// Observed is set when a path's answers came from a new address: the
	// shell's index of path addresses must follow (PeerView.Observed). A
	// change of the peers or their addresses (SetPeer, RemovePeer,
	// SetAddr) does not set it: the shell that made it knows.
	Observed bool
	// Forget are peers whose health history was dropped (removed, or
	// replaced under another key): their metric series go.
	Forget []string
	// RemovedPaths are paths a reconfigured peer no longer has.
	RemovedPaths []PathRef
	// Rotation are the steps of our own key rotation, for the log.
	Rotation []RotationEvent
	// SwitchKey asks the shell to switch to our next key, after Holds;
	// it answers KeySwitched or SwitchFailed.
	SwitchKey *KeySwitch
	// MoveKeys are peers that switched to their next key: the shell moves
	// each one's WireGuard peer and answers PeerKeyMoved.
	MoveKeys []KeyMove
}

// KeyMove asks the shell to move a peer's WireGuard peer to its next
// public key, Key. Start says the new peer starts its session at once
// (its keepalive set, which initiates): the old session was started or
// the peer is reachable. A peer whose first handshake is still deferred
// needs it too, as the peer's own initiation under the new key went out
// before its notice and was dropped.
type KeyMove struct {
	Peer  string
	Key   keys.Public
	Start bool
}

// reset empties r, keeping its memory.
func (r *Ready) reset() {
	*r = Ready{
		Probes: r.Probes[:0], Due: r.Due[:0], RTTs: r.RTTs[:0], Paths: r.Paths[:0],
		Switches: r.Switches[:0], Moves: r.Moves[:0], Routes: r.Routes[:0],
		Redundancy: r.Redundancy[:0], Restarts: r.Restarts[:0], Keepalives: r.Keepalives[:0],
		Handshakes: r.Handshakes[:0], Holds: r.Holds[:0], Forget: r.Forget[:0],
		RemovedPaths: r.RemovedPaths[:0], Rotation: r.Rotation[:0], MoveKeys: r.MoveKeys[:0],
	}
}

// Probe is a request to send: the monitor's probe (peer, path slot,
// nonce) and the address of its path.
type Probe struct {
	health.Probe
	To netip.AddrPort
	// Path is the path's index in the peer's PeerSpec.
	Path int
}

// RTT is one measured round trip on a path (Index: in the peer's
// PeerSpec).
type RTT struct {
	Peer, Path string
	Index      int
	RTT        time.Duration
}

// PathChange is a path coming up or going down at At (Index: in the
// peer's PeerSpec; Slot: its health id).
type PathChange struct {
	Peer, Path  string
	Index, Slot int
	Up          bool
	At          time.Time
}

// Move tells the Bind the peer's active path and the path copies go to
// (indices in the peer's PeerSpec; Second -1: none). Gap > 0 asks the Bind
// to move at the first gap that long in the peer's traffic (a flowlet
// boundary), so no packet overtakes one still in flight.
type Move struct {
	Peer           string
	Active, Second int
	Gap            time.Duration
}

// Route is a peer whose reachability changed: its routes point into the
// mesh while it is reachable.
type Route struct {
	Peer      string
	Reachable bool
}

// Redundancy is a change of the path a peer's traffic is copied to.
type Redundancy struct {
	Peer    string
	Mode    failover.Redundancy
	To      string // "" when copying stops
	Trouble failover.Trouble
}

// Handshake is a WireGuard handshake to initiate. With Expire, the current
// keys are dropped first (the peer lost them).
type Handshake struct {
	Peer, Reason string
	Expire       bool
}

// Hold starts (Hold) or ends the dropping of our handshake initiations to
// a peer.
type Hold struct {
	Peer string
	Hold bool
}

// PathRef names one path of one peer.
type PathRef struct{ Peer, Path string }
