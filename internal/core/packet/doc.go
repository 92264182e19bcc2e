// Package packet holds the pure, allocation-free packet logic of the relay's
// data path: the longest-prefix-match Table that maps destinations to peers,
// prefix Sets for source and destination hygiene, a minimal IPv4/IPv6 header
// parser, TCP MSS clamping, and stateless 1:1 prefix translation (Translator)
// for clusters whose pod CIDRs overlap.
//
// Everything here operates on caller-owned byte slices, in place, and never
// writes outside the slice it is given. The package does no I/O, keeps no
// clocks, starts no goroutines and does not log; the tun.Device wrapper in
// package pipe applies it to live traffic. See docs/translation.md for the
// translation convention.
package packet
