package engine

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// Input is one thing that happened, fed to Step. The kinds are the types
// of this file.
type Input interface{ input() }

// Tick is a wake of the shell: probes that are due go out, paths whose
// deadline passed go down, and the selector decides.
type Tick struct{}

// Reply is an authenticated, fresh answer to one of our probes, received
// at At from From.
type Reply struct {
	Peer         string
	Slot         int // the path field of the probe
	Nonce, Epoch uint64
	From         netip.AddrPort
	At           time.Time
}

// Housekeep is the shell's periodic round: the Bind's counters of every
// peer, as passive evidence and to tell idle peers from busy ones. It also
// runs handshakes left to a peer that did not make a session, and ends
// holds whose session formed.
type Housekeep struct {
	Peers []Traffic
}

// Traffic is what the Bind counted of one peer: authenticated data by
// source address, and data messages sent to it.
type Traffic struct {
	Peer    string
	Sources []Source
	TxData  uint64
}

// Source is authenticated data received from one address.
type Source struct {
	Addr    netip.AddrPort
	Packets uint64
}

// Stall says the shell woke Late after the deadline it slept for: time in
// which it could not run, which does not count as silence of a path.
type Stall struct{ Late time.Duration }

// SetPeer adds a peer or changes it. A peer under the same name and key
// keeps its health history and session state, and its paths keep theirs
// by name; under another key it starts afresh.
type SetPeer struct {
	Spec PeerSpec
	// Initial marks the peers of the first configuration: their first
	// handshake is a start-up, not a peer added.
	Initial bool
}

// RemovePeer forgets a peer.
type RemovePeer struct{ Name string }

// SetAddr moves path Path of a peer to a new address (its host name now
// resolves elsewhere): the path's health starts again from down.
type SetAddr struct {
	Peer string
	Path int
	Addr netip.AddrPort
}

// HoldAll holds our handshake initiations to every peer, at a key switch:
// each peer initiates under our new key once it has moved to it.
type HoldAll struct{}

// ReleaseAll ends every hold at once (the key switch did not happen).
type ReleaseAll struct{}

// PeerKeyMoved says the shell moved a peer to its next public key, Key:
// a session under it is needed now, when the peer is reachable or had one.
type PeerKeyMoved struct {
	Peer string
	Key  keys.Public
}

func (Tick) input()         {}
func (Reply) input()        {}
func (Housekeep) input()    {}
func (Stall) input()        {}
func (SetPeer) input()      {}
func (RemovePeer) input()   {}
func (SetAddr) input()      {}
func (HoldAll) input()      {}
func (ReleaseAll) input()   {}
func (PeerKeyMoved) input() {}
