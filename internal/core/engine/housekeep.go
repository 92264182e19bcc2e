package engine

import (
	"net/netip"
	"time"
)

// PeerIdleAfter: a peer with no data sent to it or received from it for
// this long is idle, and its active path is probed at the idle interval
// (health.Monitor.SetIdle). Two seconds is long past any pause inside a
// request/response exchange, and short enough that a peer that carried a
// flow a moment ago is not probed fast for long for nothing.
const PeerIdleAfter = 2 * time.Second

// trafficState is what the engine remembers of a peer's traffic, to tell
// whether it is idle.
type trafficState struct {
	tx, rx uint64    // data messages sent and received, as last seen
	last   time.Time // when they last changed; zero before the first look
}

// housekeep takes one round of the Bind's counters: handshakes left to a
// peer that are due, holds that can end, passive evidence for the paths
// whose sources received data, idleness and redundancy.
func (e *Engine) housekeep(h Housekeep, now time.Time) {
	// Packets counted since the last round arrived some time after it: date
	// the evidence at the last round, the earliest they can have arrived.
	// Dating it now would stretch a dead path's life by up to one round
	// beyond the detection time.
	evidenceAt := e.lastHousekeep
	e.lastHousekeep = now
	for _, t := range h.Peers {
		p, ok := e.peers[t.Peer]
		if !ok {
			continue
		}
		e.runDeferred(p, now)
		e.releaseHold(p, now)
		var rx uint64
		for _, src := range t.Sources {
			rx += src.Packets
		}
		newRx(p.rxSeen, t.Sources, func(addr netip.AddrPort) {
			if i := p.pathFor(addr); i >= 0 && !evidenceAt.IsZero() {
				e.mon.OnPassive(p.id(i), evidenceAt)
			}
		})
		e.trackIdle(p, t.TxData, rx, now)
		e.updateRedundancy(p, now, false)
	}
}

// pathFor finds the path whose traffic arrives from src: the address its
// probe answers came from (NAT), else its configured endpoint.
func (p *peer) pathFor(src netip.AddrPort) int {
	for i, o := range p.observed {
		if o == src {
			return i
		}
	}
	for i, s := range p.spec.Paths {
		if s.Addr == src {
			return i
		}
	}
	return -1
}

// newRx compares the Bind's per-source counts of authenticated data for
// one peer with those seen at the previous round, calls grew for each
// source whose count changed, and leaves seen holding exactly the sources
// in srcs. The Bind keeps a few sources per peer and replaces the oldest;
// seen follows it, so it never holds more than the Bind does (a source
// that comes back starts from its new count).
func newRx(seen map[netip.AddrPort]uint64, srcs []Source, grew func(netip.AddrPort)) {
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

func hasSource(srcs []Source, addr netip.AddrPort) bool {
	for _, s := range srcs {
		if s.Addr == addr {
			return true
		}
	}
	return false
}

// trackIdle: data messages sent to the peer (tx: not keepalives or
// handshakes) or received from it (rx, authenticated, summed over its
// sources) since the last round make it busy; none for PeerIdleAfter make
// it idle.
func (e *Engine) trackIdle(p *peer, tx, rx uint64, now time.Time) {
	t := &p.traffic
	if t.last.IsZero() || tx != t.tx || rx != t.rx {
		t.tx, t.rx, t.last = tx, rx, now
		e.mon.SetIdle(p.spec.Name, false)
		return
	}
	if now.Sub(t.last) >= PeerIdleAfter {
		e.mon.SetIdle(p.spec.Name, true)
	}
}
