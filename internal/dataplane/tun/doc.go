// Package tun creates the relay's kernel TUN device, a
// golang.zx2c4.com/wireguard/tun.Device with the kernel's segmentation
// offloads where it has them, and, in the tuntest subpackage, holds an
// in-memory pair of devices for tests.
//
// The device's addresses, routes and policy rules are set by
// internal/dataplane/netlink; the userspace device is
// internal/dataplane/netstack.
package tun
