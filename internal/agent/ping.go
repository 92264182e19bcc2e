package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/status"
)

// pingKey names one outstanding `relay ping` request. Nonces come from one
// counter per peer (health.Monitor.NextNonce), so requests to two peers may
// carry the same nonce: the peer is part of the key.
type pingKey struct {
	peer  string
	nonce uint64
}

// pingWait collects the answers to one ping, one probe per path. It is
// touched only by the owner goroutine; ch is closed when all have answered.
type pingWait struct {
	sent    time.Time
	results []status.PingResult
	keys    []pingKey
	left    int
	ch      chan struct{}
}

func (w *pingWait) answer(path int, at time.Time) {
	if path >= len(w.results) || w.results[path].OK {
		return
	}
	w.results[path].OK = true
	w.results[path].Error = ""
	w.results[path].RTTMs = ms(at.Sub(w.sent))
	w.left--
	if w.left == 0 {
		close(w.ch)
	}
}

// Ping probes every path of peer now and waits for the answers (admin.Source):
// admin.MaxPingWait, or until ctx ends if that is sooner (/ping's timeout).
func (a *Agent) Ping(ctx context.Context, peer string) ([]status.PingResult, error) {
	var w *pingWait
	var err error
	if cerr := a.do(ctx, func() { w, err = a.startPing(peer) }); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(admin.MaxPingWait)
	defer t.Stop()
	select {
	case <-w.ch:
	case <-t.C:
	case <-ctx.Done():
	}
	var out []status.PingResult
	finish := func() {
		out = append(out, w.results...)
		for _, k := range w.keys {
			delete(a.pings, k)
		}
	}
	if cerr := a.do(context.Background(), finish); cerr != nil {
		return nil, cerr
	}
	return out, nil
}

// startPing runs in the owner goroutine: it sends one probe per path.
func (a *Agent) startPing(peer string) (*pingWait, error) {
	st, ok := a.peers[peer]
	if !ok {
		return nil, fmt.Errorf("%w: %q", admin.ErrUnknownPeer, peer)
	}
	w := &pingWait{sent: a.clock.Now(), ch: make(chan struct{})}
	for i, path := range st.cfg.Paths {
		r := status.PingResult{Path: path.Name, Error: "timeout"}
		if !st.paths[i].addr.IsValid() {
			r.Error = "unresolved: " + st.paths[i].err
		}
		w.results = append(w.results, r)
	}
	v, _ := a.eng.Peer(peer)
	for i := range st.cfg.Paths {
		if i >= len(v.Slots) || i >= len(v.Addrs) || !v.Addrs[i].IsValid() {
			continue
		}
		// The same counter as the health probes to this peer: the peer
		// keeps one replay window for all our requests (docs/protocol.md).
		// The answer is told apart by peer and nonce; the monitor never
		// matches a ping's nonce.
		n, ok := a.eng.NextNonce(peer)
		if !ok {
			continue // no path in the monitor: nothing to probe
		}
		k := pingKey{peer: peer, nonce: n}
		w.keys = append(w.keys, k)
		a.pings[k] = w
		w.left++
		a.sendProbeOn(engine.Probe{Probe: health.Probe{ID: health.PathID{Peer: peer, Path: v.Slots[i]}, Nonce: n}, To: v.Addrs[i], Path: i})
	}
	a.flushProbes()
	if w.left == 0 {
		close(w.ch)
	}
	return w, nil
}
