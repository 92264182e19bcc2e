package failover

import (
	"fmt"
	"time"
)

// Reason says why a peer's active path changed.
type Reason string

const (
	// ReasonInitial: the first path chosen for a peer.
	ReasonInitial Reason = "initial"
	// ReasonDown: the active path went down; switched at once.
	ReasonDown Reason = "down"
	// ReasonBetter: a healthy active path was replaced by one better by both
	// margins for BetterHold.
	ReasonBetter Reason = "better"
	// ReasonFailback: back to the path we left because it went down, after
	// it stayed up for FailbackHold (and was better for BetterHold).
	ReasonFailback Reason = "failback"
	// ReasonDampened: the active path is up but its flap penalty crossed the
	// suppress limit (it went down and up again between two Ticks).
	ReasonDampened Reason = "dampened"
	// ReasonRemoved: the active path was removed from the config.
	ReasonRemoved Reason = "removed"
	// ReasonAllDown: no usable path is left; To is "" and the peer is
	// unreachable (the shell withdraws its routes, so the host's routes,
	// i.e. Liqo's own gateway, carry its traffic).
	ReasonAllDown Reason = "all-down"
	// ReasonRecovered: a path is usable again after all-down.
	ReasonRecovered Reason = "recovered"
)

// Event is one decision: peer's traffic moves from path From to path To
// ("" for none) at At.
type Event struct {
	Peer   string
	From   string
	To     string
	Reason Reason
	At     time.Time
}

func (e Event) String() string {
	from, to := e.From, e.To
	if from == "" {
		from = "-"
	}
	if to == "" {
		to = "-"
	}
	return fmt.Sprintf("%s %s -> %s (%s)", e.Peer, from, to, e.Reason)
}

// State of one path as the selector sees it.
type State uint8

const (
	// Down: the path is down (or was never observed).
	Down State = iota
	// Up: the path is up and may be chosen.
	Up
	// Dampened: the path's flap penalty is above the suppress limit; it is
	// not chosen, whether up or down, until the penalty decays below reuse.
	Dampened
)

func (s State) String() string {
	switch s {
	case Up:
		return "up"
	case Dampened:
		return "dampened"
	}
	return "down"
}
