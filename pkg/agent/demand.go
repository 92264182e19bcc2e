package agent

import (
	"net/netip"
	"time"

	"github.com/liqo-relay/relay/pkg/health"
	"github.com/liqo-relay/relay/pkg/router/bind"
)

// replacedByTraffic offers the due probe p to the monitor's demand mode
// with the arrival time of the latest authenticated data over its path, as
// the Bind timed it, and then with that of the peer's latest fresh request
// over it (health.Monitor.ReplacedByRequest, idle peers only), and reports
// whether either replaces the probe: then it is not sent.
func (a *Agent) replacedByTraffic(p health.Probe, now time.Time) bool {
	st, ok := a.peers[p.ID.Peer]
	if !ok {
		return false
	}
	i := st.indexOfSlot(p.ID.Path)
	if i < 0 {
		return false
	}
	var last time.Time
	for _, addr := range [2]netip.AddrPort{st.paths[i].observed, st.paths[i].addr} {
		if addr.IsValid() {
			if t := a.dp.bind.LastRx(p.ID.Peer, addr); t.After(last) {
				last = t
			}
		}
	}
	if a.mon.Demand(p, last, now) {
		return true
	}
	var lastReq time.Time
	if idx := a.probes.Load(); idx != nil {
		lastReq = idx.reqs[p.ID.Peer].last(st.paths[i].observed, st.paths[i].addr)
	}
	return a.mon.ReplacedByRequest(p, lastReq, now)
}

// peerIdleAfter: a peer with no data sent to it or received from it for
// this long is idle, and its active path is probed at idleInterval
// (health.Monitor.SetIdle). Two seconds is long past any pause inside a
// request/response exchange, and short enough that a peer that carried a
// flow a moment ago is not probed fast for long for nothing.
const peerIdleAfter = 2 * time.Second

// trafficState is what the agent remembers of a peer's traffic, to tell
// whether it is idle.
type trafficState struct {
	tx, rx uint64    // data messages sent and received, as last seen
	last   time.Time // when they last changed; zero before the first look
}

// trackIdle runs every housekeeping round: data messages sent to the peer
// (Bind.TxData: not keepalives or handshakes) or received from it (srcs,
// authenticated) since the last round make it busy; none for peerIdleAfter
// make it idle.
func (a *Agent) trackIdle(st *peerState, srcs []bind.Source, now time.Time) {
	var rx uint64
	for _, s := range srcs {
		rx += s.Packets
	}
	tx := a.dp.bind.TxData(st.cfg.Name)
	t := &st.traffic
	if t.last.IsZero() || tx != t.tx || rx != t.rx {
		t.tx, t.rx, t.last = tx, rx, now
		a.mon.SetIdle(st.cfg.Name, false)
		return
	}
	if now.Sub(t.last) >= peerIdleAfter {
		a.mon.SetIdle(st.cfg.Name, true)
	}
}
