package multipath

import (
	"net/netip"
	"time"
)

// Counters is one peer's traffic counters, read together (Bind.Counters).
type Counters struct {
	// Sources is the received transport data per source address, as
	// RxStats returns it.
	Sources []Source
	// TxBytes is as Bind.TxBytes, TxData as Bind.TxData.
	TxBytes uint64
	TxData  uint64
}

// Counters returns the peer's RxStats, TxBytes and TxData with one lookup
// of the peer, appending its sources to srcs[:0] so that a caller reading
// many peers every round reuses one buffer. ok is false, with no sources
// and zero counts, if the peer is unknown.
func (b *Bind) Counters(peerName string, srcs []Source) (c Counters, ok bool) {
	c.Sources = srcs[:0]
	p := b.lookup(peerName)
	if p == nil {
		return c, false
	}
	for i := range p.srcs {
		if s := p.srcs[i].Load(); s != nil {
			c.Sources = append(c.Sources, Source{Addr: s.addr, Packets: s.packets.Load(), Bytes: s.bytes.Load()})
		}
	}
	c.TxBytes = p.tx.Load()
	c.TxData = p.txData.Load()
	return c, true
}

// LastRxFrom is the later of LastRx(peerName, a) and LastRx(peerName, b),
// with one lookup of the peer; an invalid address is skipped. The agent
// asks it for a path's two addresses (where its answers come from, and its
// configured endpoint) before every probe.
func (b *Bind) LastRxFrom(peerName string, a1, a2 netip.AddrPort) time.Time {
	p := b.lookup(peerName)
	if p == nil {
		return time.Time{}
	}
	var n int64
	for _, addr := range [2]netip.AddrPort{a1, a2} {
		if !addr.IsValid() {
			continue
		}
		if s := p.sourceOf(addr); s != nil {
			n = max(n, s.last.Load())
		}
	}
	if n == 0 {
		return time.Time{}
	}
	return b.clock.Load().base.Add(time.Duration(n))
}
