// Package pipe applies the router's per-packet rules to live traffic: Device
// wraps the local-side tun.Device that wireguard-go reads from and writes to,
// and on the way through enforces source and destination hygiene, translates
// overlapping prefixes per peer, rewrites the source of foreign ICMP errors
// and clamps TCP MSS. Rules are compiled once (Compile) and swapped in
// atomically (Device.SetRules) for live reload.
package pipe
