// Package liqonet fits a TUN-mode relay into a Liqo gateway pod's network
// namespace (docs/liqo-addressing.md, §7): the nftables table that pins a
// relay-carried connection on its first packet ahead of Liqo's NAT, the
// policy rules that route pinned, injected and consumer-path packets, kept
// ahead of Liqo's rules by watching rule notifications, the copy of Liqo's
// per-node pod routes that lets packets injected into the TUN reach pods on
// every node, and the reset of pinned connections when the relay withdraws a
// peer, which cannot survive the fall back to Liqo's path.
//
// The kernel state belongs to the network namespace a Manager was created
// in. Everything goes over netlink, no binary is run (the image is
// scratch): nftables through google/nftables (the table is replaced whole in
// one transaction; operators read it with `nft list table ip liqo-relay`),
// routes, rules and conntrack through vishvananda/netlink.
package liqonet
