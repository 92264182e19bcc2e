// Package engine makes every decision of one relay: which paths to probe
// and when, when a path is up or down, which path carries each peer's
// traffic and when a move waits for a flowlet boundary, when traffic is
// copied to a second path, when a WireGuard handshake starts or is left to
// the peer, and when our handshakes are held after a key switch.
//
// It is a pure state machine in the manner of etcd raft's: the shell (the
// relay's owner loop, or the simulator) feeds it one input at a time with
// Step, which returns a Ready holding everything the shell must do: probes
// to send, paths to move, routes to change, handshakes to start. The
// engine does no I/O, reads no clock and starts no goroutine; time comes
// in with every input. What it must know of the world between inputs (the
// latest data over a path, the latest handshake) it reads from Facts, as
// raft reads its Storage.
//
// Path kinds are the shell's business: a path is a name, a bias and an
// address, and the engine decides the same way for a direct link, a
// consumer path or a relayed one.
package engine
