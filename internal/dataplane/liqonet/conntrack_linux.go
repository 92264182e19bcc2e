//go:build linux

package liqonet

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// pinnedFilter matches the conntrack entries of connections pinned to one
// peer: the relay's mark, and the peer's prefixes as the original
// destination (opened here) or source (opened by the peer, from the TUN).
type pinnedFilter struct {
	mark     uint32
	prefixes []netip.Prefix
}

// MatchConntrackFlow implements netlink.CustomConntrackFilter.
func (f pinnedFilter) MatchConntrackFlow(flow *netlink.ConntrackFlow) bool {
	if flow.Mark&f.mark == 0 {
		return false
	}
	return f.contains(flow.Forward.DstIP) || f.contains(flow.Forward.SrcIP)
}

func (f pinnedFilter) contains(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = a.Unmap()
	for _, p := range f.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// resetLocked deletes the peer's pinned connections from conntrack and
// counts them. Their next packet starts a new entry: not pinned (the peer
// left the nft set first), it takes Liqo's NAT and path, where the remote
// pod does not know the connection and answers with a reset. Called with
// m.mu held.
func (m *Manager) resetLocked(name string, prefixes []netip.Prefix) error {
	if len(prefixes) == 0 {
		return nil
	}
	n, err := m.h.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, pinnedFilter{mark: m.opts.Mark, prefixes: prefixes})
	m.resets[name] += uint64(n)
	if n > 0 {
		m.log.Info("reset connections pinned to a withdrawn peer", "peer", name, "connections", n)
	}
	if err != nil {
		return fmt.Errorf("liqo: delete pinned connections of peer %q: %w", name, err)
	}
	return nil
}
