// Package failover chooses, for every peer of a relay, the path that carries
// its traffic. It is a pure state machine in the style of etcd raft: the
// shell feeds it path observations (from health.Monitor) and the current
// time, calls Tick, and applies the Events it returns (switch the peer's
// WireGuard endpoint, or withdraw its routes when it is unreachable). It has
// no goroutines, clock, sockets or logging, and it is deterministic: the same
// inputs give the same outputs, peers are visited in sorted order.
//
// The rules, every setting and the dampening arithmetic are in
// docs/failover.md; in short:
//   - the active path is the up path of lowest cost, srtt + bias + lossPenalty*loss;
//   - an active path that goes down is replaced at once (reason "down");
//   - a healthy active path is replaced only by a path better by both margins
//     for BetterHold ("better"), or, if that is the path we left because it
//     went down, also up for FailbackHold ("failback");
//   - paths that flap are suppressed by RFC 2439 dampening ("dampened");
//   - with no usable path the peer is unreachable ("all-down") until one
//     comes back ("recovered").
package failover
