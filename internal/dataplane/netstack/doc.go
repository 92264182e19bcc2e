// Package netstack is the relay's userspace device: a subnet router on a
// gVisor network stack, behind the golang.zx2c4.com/wireguard/tun.Device
// interface that WireGuard reads and writes raw IP packets through. It
// terminates the relay's own overlay addresses (ICMP echo, listeners and
// dials for local applications, the SOCKS5 proxy of
// internal/dataplane/socks5 among them) and forwards TCP and UDP to
// exported destinations through the host network.
//
// This is the only package of the module allowed to import gVisor.
package netstack
