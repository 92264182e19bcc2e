// Package tun holds the devices packets enter and leave by: a kernel TUN
// interface, a gVisor userspace netstack (a subnet router that terminates the
// relay's own overlay addresses and forwards exported destinations to the
// host network), and, in the tuntest subpackage, an in-memory pair for tests.
//
// Every device implements golang.zx2c4.com/wireguard/tun.Device. This is the
// only package of the module allowed to import gVisor.
package tun
