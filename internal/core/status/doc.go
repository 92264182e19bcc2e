// Package status holds the relay's status document: what /status returns
// and `relay status --json` prints (the relay's peers, their paths and the
// paths' health, recent path switches, a staged key rotation), and the
// results of /ping. It is data only, with the JSON encoding of its
// timestamps, so that everything that produces or reads a status (the
// agent, the admin server, client and renderers, the Kubernetes
// controllers, the relay command) shares the types without importing the
// HTTP package. It is pure: no I/O, no clock.
package status
