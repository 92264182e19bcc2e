// Package health is the pure core of liqo-relay's path liveness: the probe
// wire format and its authentication, per-path RTT/jitter/loss estimators, a
// BFD-like up/down detector, and a Monitor that schedules probes over many
// paths and reports up/down transitions.
//
// Nothing here touches the network, the clock or the logger: the shell (the
// agent) reads and writes the UDP socket, passes the current time in as
// `now`, and logs the transitions it is handed. That keeps every decision
// reproducible in tests with fake time, the way etcd raft keeps its state
// machine free of I/O.
//
// The wire format, key derivation and replay protection are described byte
// by byte in docs/protocol.md.
package health
