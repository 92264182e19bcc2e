// Package dnsserver is the relay's topology-aware DNS responder. It
// serves one zone (dnsServer.zone, default relay.local.):
//
//   - <peer>.<zone>: the overlay addresses of a peer relay (and of this
//     relay under its own name), when it is reachable;
//   - <service>.<namespace>.<zone>: the endpoints of a Service that
//     several clusters serve, as this cluster's pods route them, from
//     healthy clusters only, the local cluster first, then the peers by
//     measured path cost (docs/dns.md).
//
// It is not an open resolver: names outside the zone are REFUSED, it
// never recurses, each source address is rate limited (a token bucket),
// UDP answers are truncated to the client's size (TC set, TCP answers in
// full), and it listens only on the addresses it is given.
//
// What it answers comes from a View, an immutable snapshot that the agent
// publishes on every housekeeping round (Server.SetView); ordering is a
// pure function of the View, and the rate limit is health.SourceBudget,
// a token bucket per source fed `now`.
package dnsserver
