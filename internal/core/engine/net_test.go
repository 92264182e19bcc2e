package engine

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// t0 is the fake clock's origin.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// link is one path of the fake network: answers come back after rtt,
// none while cut.
type link struct {
	rtt time.Duration
	cut bool
}

// fakeNet drives one engine on fake time: it answers the probes of Ready
// over its links, runs housekeeping every round, and keeps every Ready's
// outputs in a log. Facts come from its fields.
type fakeNet struct {
	t     *testing.T
	e     *Engine
	now   time.Time
	links map[string]*link // by path address
	// inflight are answers on their way, by arrival.
	inflight []Reply
	round    time.Duration // housekeeping interval
	nextHK   time.Time
	// lastRx and lastHandshake are the facts the engine reads.
	lastRx        map[string]time.Time
	lastHandshake map[string]time.Time
	traffic       map[string]uint64 // TxData per peer, for Housekeep
	epoch         uint64            // the peer's boot epoch in its answers
	probes        int               // probes sent in all
	log           []string
}

func (n *fakeNet) LastRx(peer string, _, _ netip.AddrPort) time.Time { return n.lastRx[peer] }
func (n *fakeNet) LastRequest(string, netip.AddrPort, netip.AddrPort) time.Time {
	return time.Time{}
}
func (n *fakeNet) LastHandshake(peer string) time.Time { return n.lastHandshake[peer] }

// newNet returns an engine running under key self, on a fake network.
func newNet(t *testing.T, self keys.Public) *fakeNet {
	n := &fakeNet{
		t: t, now: t0, links: map[string]*link{}, round: 100 * time.Millisecond, nextHK: t0,
		epoch: 7, lastRx: map[string]time.Time{}, lastHandshake: map[string]time.Time{}, traffic: map[string]uint64{},
	}
	n.e = New(Options{Self: self, Rand: rand.New(rand.NewPCG(1, 2)), Selection: failover.DefaultSettings(), Facts: n})
	return n
}

// addr is the address of test path number i.
func addr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), 51820)
}

// key is a public key that sorts by b.
func key(b byte) keys.Public { return keys.Public{b} }

// peerSpec is a peer named name, with the paths given as name=rtt pairs
// (in order), probing every 20 ms.
func (n *fakeNet) addPeer(name string, pub keys.Public, sel failover.Settings, paths ...string) {
	spec := PeerSpec{Name: name, PublicKey: pub, Selection: sel, Keepalive: true}
	spec.Probing = health.DefaultSettings()
	spec.Probing.Interval = 20 * time.Millisecond
	for _, p := range paths {
		pname, rtt, _ := strings.Cut(p, "=")
		d, err := time.ParseDuration(rtt)
		if err != nil {
			n.t.Fatal(err)
		}
		a := addr(len(n.links) + 1)
		n.links[a.String()] = &link{rtt: d}
		bias := time.Duration(0)
		if pname == "consumer" {
			bias = 5 * time.Millisecond
		}
		spec.Paths = append(spec.Paths, PathSpec{Name: pname, Bias: bias, Addr: a})
	}
	n.step(SetPeer{Spec: spec, Initial: true})
}

// linkOf is the link of a peer's path by name.
func (n *fakeNet) linkOf(peer, path string) *link {
	v, ok := n.e.Peer(peer)
	if !ok {
		n.t.Fatalf("no peer %s", peer)
	}
	i := n.e.peers[peer].pathIndex(path)
	return n.links[v.Addrs[i].String()]
}

// step feeds one input at the current time and logs its outputs.
func (n *fakeNet) step(in Input) *Ready {
	r := n.e.Step(n.now, in)
	n.probes += len(r.Probes)
	for _, pr := range r.Probes {
		l := n.links[pr.To.String()]
		if l == nil || l.cut {
			continue
		}
		n.inflight = append(n.inflight, Reply{Peer: pr.ID.Peer, Slot: pr.ID.Path, Nonce: pr.Nonce, Epoch: n.epoch, From: pr.To, At: n.now.Add(l.rtt)})
	}
	slices.SortStableFunc(n.inflight, func(a, b Reply) int { return a.At.Compare(b.At) })
	n.record(r)
	return r
}

// record logs what a Ready decided (not probes and RTTs, which are many).
func (n *fakeNet) record(r *Ready) {
	at := n.now.Sub(t0).Milliseconds()
	add := func(format string, a ...any) {
		n.log = append(n.log, fmt.Sprintf("%6dms ", at)+fmt.Sprintf(format, a...))
	}
	for _, p := range r.Paths {
		add("path %s/%s up=%v", p.Peer, p.Path, p.Up)
	}
	for _, s := range r.Switches {
		add("switch %s %q->%q %s", s.Peer, s.From, s.To, s.Reason)
	}
	for _, m := range r.Moves {
		add("move %s active=%d second=%d gap=%v", m.Peer, m.Active, m.Second, m.Gap > 0)
	}
	for _, x := range r.Routes {
		add("route %s reachable=%v", x.Peer, x.Reachable)
	}
	for _, x := range r.Redundancy {
		add("redundancy %s to=%q", x.Peer, x.To)
	}
	for _, x := range r.Keepalives {
		add("keepalive %s", x)
	}
	for _, h := range r.Handshakes {
		add("handshake %s %s expire=%v", h.Peer, h.Reason, h.Expire)
	}
	for _, h := range r.Holds {
		add("hold %s %v", h.Peer, h.Hold)
	}
}

// run advances fake time by d, delivering answers, ticking at the
// engine's deadlines and housekeeping every round.
func (n *fakeNet) run(d time.Duration) {
	end := n.now.Add(d)
	for {
		next := end
		if len(n.inflight) > 0 && n.inflight[0].At.Before(next) {
			next = n.inflight[0].At
		}
		if dl := n.e.NextDeadline(); !dl.IsZero() && dl.Before(next) {
			next = dl
		}
		if n.nextHK.Before(next) {
			next = n.nextHK
		}
		if next.After(end) {
			break
		}
		if next.After(n.now) {
			n.now = next
		}
		switch {
		case len(n.inflight) > 0 && !n.inflight[0].At.After(n.now):
			r := n.inflight[0]
			n.inflight = n.inflight[1:]
			n.step(r)
		case !n.nextHK.After(n.now):
			n.nextHK = n.now.Add(n.round)
			var h Housekeep
			for name := range n.e.peers {
				h.Peers = append(h.Peers, Traffic{Peer: name, TxData: n.traffic[name]})
			}
			n.step(h)
		}
		n.step(Tick{})
		if !n.now.Before(end) {
			break
		}
	}
	n.now = end
}

// since returns the log lines recorded from line i on.
func (n *fakeNet) since(i int) string { return strings.Join(n.log[i:], "\n") }

// want fails unless the log from line i on has each of lines, in order.
func (n *fakeNet) want(i int, lines ...string) {
	n.t.Helper()
	got := n.log[i:]
	j := 0
	for _, l := range got {
		if j < len(lines) && strings.HasSuffix(l, lines[j]) {
			j++
		}
	}
	if j < len(lines) {
		n.t.Fatalf("missing %q (and after it %q) in:\n%s", lines[j], lines[j+1:], n.since(i))
	}
}

// never fails if the log from line i on has a line containing s.
func (n *fakeNet) never(i int, s string) {
	n.t.Helper()
	for _, l := range n.log[i:] {
		if strings.Contains(l, s) {
			n.t.Fatalf("unexpected %q in:\n%s", s, n.since(i))
		}
	}
}
