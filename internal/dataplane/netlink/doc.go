// Package netlink programs the kernel state of a TUN relay over netlink:
// the TUN link's addresses, MTU and up state, the routes of reachable
// peers in the relay's table, and the policy rules that send traffic to
// that table (RouteManager, CleanupStale). It also holds the netlink pieces
// the Liqo integration (subpackage liqo) shares with the route manager: one
// implementation of an owned set of policy rules kept in place beside
// other agents' rules (RuleSet), the handle with its timeout, and the
// address conversions.
//
// Everything goes over netlink (github.com/vishvananda/netlink); no binary
// is run. Off Linux the route manager returns ErrRoutesUnsupported.
package netlink
