package netstack

import "sync/atomic"

// Stats counts what a Netstack forwarded and refused since it was
// created. Counters only grow; the Active fields are gauges.
type Stats struct {
	TCPForwarded    uint64 // inbound TCP connections spliced to a backend
	TCPActive       int64  // of those, still open
	TCPDialFailures uint64 // backend dials that failed (the peer got a RST)
	UDPFlows        uint64 // inbound UDP flows forwarded to a backend
	UDPActive       int64  // of those, still open
	UDPDialFailures uint64 // backend dials that failed (the flow was dropped)
	UDPIdleClosed   uint64 // flows closed by the idle timeout
	UDPTracked      int    // flows in the table now (at most the UDPMaxFlows cap)
	UDPEvicted      uint64 // idle flows closed to make room for a new one in a full table
	UDPRefused      uint64 // new flows' datagrams dropped: table full, no flow idle enough to evict
	Filtered        uint64 // inbound packets dropped: destination neither own nor exported, malformed, or echo to an exported host
}

type nsCounters struct {
	tcpForwarded, tcpDialFailures                atomic.Uint64
	tcpActive, udpActive                         atomic.Int64
	udpFlows, udpDialFailures, udpIdle, filtered atomic.Uint64
	udpEvicted, udpRefused                       atomic.Uint64
}

// Stats returns a snapshot of the counters.
func (n *Netstack) Stats() Stats {
	c := &n.stats
	n.mu.Lock()
	tracked := len(n.flows)
	n.mu.Unlock()
	return Stats{
		UDPTracked:      tracked,
		UDPEvicted:      c.udpEvicted.Load(),
		UDPRefused:      c.udpRefused.Load(),
		TCPForwarded:    c.tcpForwarded.Load(),
		TCPActive:       c.tcpActive.Load(),
		TCPDialFailures: c.tcpDialFailures.Load(),
		UDPFlows:        c.udpFlows.Load(),
		UDPActive:       c.udpActive.Load(),
		UDPDialFailures: c.udpDialFailures.Load(),
		UDPIdleClosed:   c.udpIdle.Load(),
		Filtered:        c.filtered.Load(),
	}
}
