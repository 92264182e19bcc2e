// Package agent is the relay's shell: it wires the devices (internal/dataplane/tun), the
// packet pipeline (internal/dataplane/pipe), the multipath transport
// (internal/dataplane/conn/multipath) and wireguard-go together, feeds what
// it sees (probe answers, the Bind's counters, late wakes, configuration)
// into the pure engine (internal/core/engine), and carries out what the
// engine decides (ready.go: probes, path moves, routes, handshakes, holds,
// key switches). It decides nothing about paths itself.
//
// One goroutine owns all mutable state (Agent.Run). Everything else talks to
// it through channels: probe replies from the Bind's receive goroutines,
// reloads from SIGHUP, status and ping requests from the admin server.
package agent
