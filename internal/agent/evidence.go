package agent

import (
	"net/netip"

	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// newRx compares the Bind's per-source counts of authenticated data for
// one peer (bind.RxStats) with those seen at the previous round, calls
// grew for each source whose count changed, and leaves seen holding
// exactly the sources in srcs. The Bind keeps a few sources per peer and
// replaces the oldest; seen follows it, so it never holds more than the
// Bind does (a source that comes back starts from its new count).
func newRx(seen map[netip.AddrPort]uint64, srcs []multipath.Source, grew func(netip.AddrPort)) {
	for addr := range seen {
		if !hasSource(srcs, addr) {
			delete(seen, addr)
		}
	}
	for _, src := range srcs {
		if prev, ok := seen[src.Addr]; ok && prev == src.Packets {
			continue
		}
		seen[src.Addr] = src.Packets
		grew(src.Addr)
	}
}

func hasSource(srcs []multipath.Source, addr netip.AddrPort) bool {
	for _, s := range srcs {
		if s.Addr == addr {
			return true
		}
	}
	return false
}
