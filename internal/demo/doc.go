// Package demo runs an in-process federation of three relays, consumer,
// provider-a and provider-b, in netstack mode on loopback: no privileges,
// no TUN, no kernel WireGuard. Emulated WAN links (internal/demo/linkem) give the
// paths their latencies, a TCP echo stream between a "pod" behind
// provider-a and one behind provider-b measures what an application sees,
// and a script cuts and restores the direct A-B link to show failover.
package demo
