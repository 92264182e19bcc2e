package netstack

import (
	"math"
	"time"
)

const (
	// nsUDPEvictIdle is how long a flow must have been silent before a new
	// flow may take its place in a full table. A flow silent this long is
	// between exchanges (a DNS or NTP client is done; chattier protocols
	// speak more often); closing it costs at most a fresh flow, with a new
	// host-side port, on its next datagram. Active flows are never
	// evicted, so a flood of new 4-tuples cannot push them out.
	nsUDPEvictIdle = 5 * time.Second
	// nsUDPScanGap spaces the scans of a full table for flows to evict.
	// Each scan visits every flow, and a full table is what a flood of new
	// 4-tuples produces: between scans, new flows are refused at the cost
	// of a comparison.
	nsUDPScanGap = 100 * time.Millisecond
)

// udpAdmitLocked decides, at now, whether a new UDP flow may join the table,
// and if so reserves its place (udpPending; the caller releases it). When
// the table is full it makes room by removing every flow silent for at
// least the eviction time (nsUDPEvictIdle, or the idle timeout if shorter):
// those are returned, for the caller to close once n.mu is released. When
// none is that silent the new flow is refused. A full table is scanned at
// most once per nsUDPScanGap, and not before the least recently active flow
// can have become evictable. The caller holds n.mu.
func (n *Netstack) udpAdmitLocked(now time.Time) (evicted []*nsUDPFlow, ok bool) {
	if len(n.flows)+n.udpPending < n.udpMax {
		n.udpPending++
		return nil, true
	}
	if now.Before(n.udpNextScan) {
		return nil, false
	}
	evictIdle := min(nsUDPEvictIdle, n.udpIdle)
	cutoff := now.Add(-evictIdle).UnixNano()
	oldest := int64(math.MaxInt64)
	for f := range n.flows {
		if last := f.last.Load(); last <= cutoff {
			delete(n.flows, f)
			evicted = append(evicted, f)
		} else if last < oldest {
			oldest = last
		}
	}
	n.udpNextScan = now.Add(nsUDPScanGap)
	if oldest != math.MaxInt64 {
		if t := time.Unix(0, oldest).Add(evictIdle); t.After(n.udpNextScan) {
			n.udpNextScan = t
		}
	}
	if len(n.flows)+n.udpPending >= n.udpMax {
		return evicted, false
	}
	n.udpPending++
	return evicted, true
}

// udpEvict closes flows udpAdmitLocked removed from the table, counting
// those it closed (one may have ended on its own meanwhile).
func (n *Netstack) udpEvict(flows []*nsUDPFlow) {
	for _, f := range flows {
		if f.close() {
			n.stats.udpEvicted.Add(1)
			n.log.Debug("udp forward: table full, idle flow evicted", "src", f.src, "dst", f.dst)
		}
	}
}
