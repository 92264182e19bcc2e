package health

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestNonceWindowIndependentOfPeerCount runs a sender with many peers, three
// paths each (the first active, at the default intervals), and delivers the
// requests for one of those peers to its replay filter as two paths of
// different latency would: the active path's requests arrive slowDelay
// after those of the two standby paths. With one nonce counter for all
// peers, the sender's requests to the other peers in between put the slow
// path's nonces more than the 2048 of the window behind the newest the
// receiver saw, and they are dropped as replays; with one counter per peer
// the window spans the same time whatever the peer count, and every
// request must be accepted.
func TestNonceWindowIndependentOfPeerCount(t *testing.T) {
	const (
		peers     = 1000
		slowDelay = 200 * time.Millisecond
		fastDelay = time.Millisecond
		run       = 3 * time.Second
		step      = time.Millisecond
	)
	m := newTestMonitor(11)
	for i := range peers {
		for path := range 3 {
			id := PathID{Peer: fmt.Sprintf("p%d", i), Path: path}
			m.SetPath(id, Settings{})
			m.SetActive(id, path == 0)
		}
	}
	const target = "p17"
	type arrival struct {
		at    time.Time
		nonce uint64
		path  int
	}
	var arrivals []arrival
	var probes []Probe
	for now := t0; now.Before(t0.Add(run)); now = now.Add(step) {
		probes = m.Due(now, probes[:0])
		for _, p := range probes {
			if p.ID.Peer != target {
				continue
			}
			d := fastDelay
			if p.ID.Path == 0 {
				d = slowDelay
			}
			arrivals = append(arrivals, arrival{at: now.Add(d), nonce: p.Nonce, path: p.ID.Path})
		}
	}
	slices.SortStableFunc(arrivals, func(a, b arrival) int { return a.at.Compare(b.at) })

	var f ReplayFilter // the target's filter for this sender
	var newest uint64
	overtaken, dropped := 0, 0
	for _, a := range arrivals {
		if a.nonce < newest {
			overtaken++
		}
		newest = max(newest, a.nonce)
		if !f.Accept(1, a.nonce) {
			dropped++
			if dropped <= 3 {
				t.Errorf("request on path %d with nonce %d dropped (newest seen %d, %d behind)", a.path, a.nonce, newest, newest-a.nonce)
			}
		}
	}
	if dropped > 0 {
		t.Errorf("%d of %d requests to %s dropped as replays", dropped, len(arrivals), target)
	}
	if overtaken == 0 || len(arrivals) < 30 {
		t.Fatalf("%d requests, %d overtaken: the scenario did not reorder the paths", len(arrivals), overtaken)
	}
}

// TestNoncesPerPeer checks the counters themselves: requests to one peer,
// probes and pings alike, take consecutive nonces whatever is sent to the
// others; NextNonce refuses a peer without paths; and a peer removed and
// added again (a reload) continues above every nonce it was sent before,
// so that the window its relay kept for us accepts the new requests.
func TestNoncesPerPeer(t *testing.T) {
	m := newTestMonitor(12)
	a0, a1 := PathID{Peer: "a", Path: 0}, PathID{Peer: "a", Path: 1}
	c0 := PathID{Peer: "c", Path: 0}
	for _, id := range []PathID{a0, a1, c0} {
		m.SetPath(id, Settings{})
		m.SetActive(id, true)
	}
	if _, ok := m.NextNonce("stranger"); ok {
		t.Fatal("NextNonce gave a nonce for a peer without paths")
	}
	last := map[string]uint64{}
	next := func(peer string, n uint64) {
		t.Helper()
		if l, ok := last[peer]; ok && n != l+1 {
			t.Fatalf("nonce %d to %s after %d: not the next of its counter", n, peer, l)
		}
		last[peer] = n
	}
	now := t0
	var probes []Probe
	for i := range 50 {
		probes = m.Due(now, probes[:0])
		for _, p := range probes {
			next(p.ID.Peer, p.Nonce)
		}
		if i%3 == 0 {
			n, ok := m.NextNonce("a")
			if !ok {
				t.Fatal("NextNonce: peer a unknown")
			}
			next("a", n)
		}
		now = now.Add(30 * time.Millisecond)
	}
	before := last["a"]
	m.RemovePath(a0)
	m.RemovePath(a1)
	if _, ok := m.NextNonce("a"); ok {
		t.Fatal("NextNonce gave a nonce for a removed peer")
	}
	m.SetPath(a1, Settings{})
	probes = m.Due(now, probes[:0])
	var got []uint64
	for _, p := range probes {
		if p.ID.Peer == "a" {
			got = append(got, p.Nonce)
		}
	}
	if len(got) != 1 || got[0] <= before {
		t.Fatalf("after re-adding a, its requests carry %v; want one above %d, the last before its removal", got, before)
	}
}
