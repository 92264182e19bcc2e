// Package agent is the relay's shell: it wires the devices (internal/dataplane/tun), the
// packet pipeline (internal/dataplane/pipe), the multipath transport
// (internal/dataplane/conn/multipath) and wireguard-go together, feeds probe results into the
// pure health monitor and path selector, and acts on their decisions
// (switch a peer's path, withdraw or restore its routes, start handshakes).
//
// One goroutine owns all mutable state (Agent.Run). Everything else talks to
// it through channels: probe replies from the Bind's receive goroutines,
// reloads from SIGHUP, status and ping requests from the admin server.
package agent
