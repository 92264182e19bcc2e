// Package bridge is the shell of liqo-relay's userspace WAN emulator: a
// transparent L2 bridge between two network interfaces (usually the inner
// ends of two veth pairs in a namespace of their own) that moves every
// Ethernet frame through a wanem.Direction per direction, over AF_PACKET
// sockets. It rewrites no address: two hosts on either side see each other
// as on one Ethernet segment, so a path through it stays un-NATed.
//
// Per direction one goroutine reads frames and one writes those that are
// due; with no delay and an empty queue the reader forwards at once.
// Offloads must be off on the bridged ports (Bridge does it) and checksum
// offload off on the far ends (DisableOffloads, or `ethtool -K`): AF_PACKET
// sees frames as the kernel holds them, and a frame with a checksum left
// to the NIC, or a 64 KiB GSO super-frame, cannot be forwarded as is.
//
// The Server exposes the settings and counters over HTTP on a unix socket;
// Client is its client (`wanem set`, `wanem show`: perf/cmd/wanem).
package bridge
