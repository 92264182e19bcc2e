package engine

import (
	"net/netip"
	"time"
)

// Facts is what the engine reads of the world while it steps, the way
// raft reads its Storage: values the data plane keeps current faster than
// inputs could carry them. Its methods must not block.
type Facts interface {
	// LastRx is the arrival time of the latest authenticated data from
	// the peer over either address (zero: none).
	LastRx(peer string, observed, addr netip.AddrPort) time.Time
	// LastRequest is when the peer's latest fresh probe request arrived
	// from either address (zero: none).
	LastRequest(peer string, observed, addr netip.AddrPort) time.Time
	// LastHandshake is when the peer's current WireGuard session was
	// made (zero: none).
	LastHandshake(peer string) time.Time
}

// NoFacts knows of no data, request or handshake.
type NoFacts struct{}

func (NoFacts) LastRx(string, netip.AddrPort, netip.AddrPort) time.Time      { return time.Time{} }
func (NoFacts) LastRequest(string, netip.AddrPort, netip.AddrPort) time.Time { return time.Time{} }
func (NoFacts) LastHandshake(string) time.Time                               { return time.Time{} }
