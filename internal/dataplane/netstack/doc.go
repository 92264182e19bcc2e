// Package netstack is the relay's userspace device: a subnet router on a
// gVisor network stack, behind the golang.zx2c4.com/wireguard/tun.Device
// interface that WireGuard reads and writes raw IP packets through. It
// terminates the relay's own overlay addresses (ICMP echo, local listeners,
// dials into the mesh), forwards TCP and UDP to exported destinations
// through the host network, and serves a SOCKS5 proxy into the mesh.
//
// This is the only package of the module allowed to import gVisor.
package netstack
