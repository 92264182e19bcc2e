// Package tun holds the relay's kernel TUN device with its routes and
// policy rules, and, in the tuntest subpackage, an in-memory pair of
// devices for tests. The userspace device is internal/dataplane/netstack.
package tun
