package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// replacedByTraffic offers the due probe p, on st's path i (probePath), to
// the monitor's demand mode with the arrival time of the latest
// authenticated data over its path, as the Bind timed it, and then with
// that of the peer's latest fresh request over it
// (health.Monitor.ReplacedByRequest, idle peers only), and reports whether
// either replaces the probe: then it is not sent.
func (a *Agent) replacedByTraffic(p health.Probe, st *peerState, i int, now time.Time) bool {
	ps := &st.paths[i]
	last := a.dp.paths.LastRxFrom(p.ID.Peer, ps.observed, ps.addr)
	if a.mon.Demand(p, last, now) {
		return true
	}
	var lastReq time.Time
	if idx := a.probes.Load(); idx != nil {
		lastReq = idx.reqs[p.ID.Peer].last(ps.observed, ps.addr)
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
// (tx, Bind.TxData: not keepalives or handshakes) or received from it (rx,
// authenticated, summed over its sources) since the last round make it
// busy; none for peerIdleAfter make it idle.
func (a *Agent) trackIdle(st *peerState, tx, rx uint64, now time.Time) {
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
