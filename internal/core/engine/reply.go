package engine

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// ReplyPath is the index of the path a reply from `from` under slot
// answers for, and false when there is none or when from is another
// path's address (its RTT would be credited to the wrong path). The shell
// asks it for answers to its own pings, which the monitor never sees.
func (e *Engine) ReplyPath(peerName string, slot int, from netip.AddrPort) (int, bool) {
	p, ok := e.peers[peerName]
	if !ok {
		return -1, false
	}
	i := p.indexOfSlot(slot)
	if i < 0 || p.answersOtherPath(i, from) {
		return -1, false
	}
	return i, true
}

// answersOtherPath reports whether from is known as another path's address
// (and not as this one's: two paths may share an endpoint).
func (p *peer) answersOtherPath(i int, from netip.AddrPort) bool {
	if p.spec.Paths[i].Addr == from || p.observed[i] == from {
		return false
	}
	for j := range p.spec.Paths {
		if j != i && (p.spec.Paths[j].Addr == from || p.observed[j] == from) {
			return true
		}
	}
	return false
}

// reply takes an answer to one of our probes to the monitor: its RTT, the
// peer's boot epoch (a restart needs a new handshake at once) and where the
// path's answers come from.
func (e *Engine) reply(r Reply) {
	i, ok := e.ReplyPath(r.Peer, r.Slot, r.From)
	if !ok {
		return
	}
	p := e.peers[r.Peer]
	rtt, ok := e.mon.OnReply(p.id(i), r.Nonce, r.At)
	if !ok {
		return
	}
	// The epoch is taken only from replies that matched one of our own
	// outstanding requests: a replay cannot fake a restart.
	if e.mon.ObserveEpoch(r.Peer, r.Epoch) {
		e.ready.Restarts = append(e.ready.Restarts, r.Peer)
		e.kick(p, ReasonPeerRestarted, true, r.At)
	}
	if p.observed[i] != r.From {
		p.observed[i] = r.From
		e.observed = true // its probes now come from there too
	}
	e.ready.RTTs = append(e.ready.RTTs, RTT{Peer: r.Peer, Path: p.spec.Paths[i].Name, Index: i, RTT: rtt})
	e.observe(p, i, r.At)
}

// replacedByTraffic offers the due probe pr, on p's path i, to the
// monitor's demand mode with the arrival time of the latest authenticated
// data over the path, and then with that of the peer's latest fresh
// request over it (idle peers only), and reports whether either replaces
// the probe: then it is not sent.
func (e *Engine) replacedByTraffic(pr health.Probe, p *peer, i int, now time.Time) bool {
	obs, addr := p.observed[i], p.spec.Paths[i].Addr
	if e.mon.Demand(pr, e.facts.LastRx(p.spec.Name, obs, addr), now) {
		return true
	}
	return e.mon.ReplacedByRequest(pr, e.facts.LastRequest(p.spec.Name, obs, addr), now)
}
