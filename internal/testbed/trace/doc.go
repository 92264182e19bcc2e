// Package trace runs golden traces: a script of what happens to one relay
// (its peers and paths, cuts and restores, traffic, stalls, a key
// rotation) is played on a deterministic network against a relay, and
// what the relay does (probes, traffic moves, routes, keepalives,
// handshakes, holds, key switches, path selections) is written as a log
// that must match the trace's golden output.
//
// The relay is behind an interface so that one trace runs through every
// driver of the engine: the engine itself (EngineRelay, the simulator's
// way) and the relay's shell with fake I/O (internal/agent's tests). The
// same trace giving the same log through both shows the shell decides
// nothing of its own.
package trace
