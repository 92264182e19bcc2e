package agent

import (
	"net/netip"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/dataplane/conn/conntest"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

func testPeerKeys(t *testing.T) (ours, theirs *health.PeerKey) {
	t.Helper()
	var privA, privB keys.Private
	for i := range privA {
		privA[i], privB[i] = byte(i+1), byte(2*i+3)
	}
	pubA, pubB := privA.PublicKey(), privB.PublicKey()
	var err error
	if ours, err = health.NewPeerKey(privA, pubB); err != nil {
		t.Fatal(err)
	}
	if theirs, err = health.NewPeerKey(privB, pubA); err != nil {
		t.Fatal(err)
	}
	return ours, theirs
}

// TestRequestsRecordedOnlyWhenAuthenticatedAndFresh drives handleProbe
// with the peer's requests: a fresh authenticated request from a path
// address is recorded for that address (whichever form, IPv4 or mapped,
// it arrives in); a replay of it, a forged one, a reply and one from an
// address that is no path of the peer are not.
func TestRequestsRecordedOnlyWhenAuthenticatedAndFresh(t *testing.T) {
	ours, theirs := testPeerKeys(t)
	path := netip.MustParseAddrPort("192.0.2.7:51820")
	other := netip.MustParseAddrPort("192.0.2.7:40000")
	base := time.Unix(1000, 0)
	clk := &fixedClock{t: base.Add(time.Second)}
	a := &Agent{clock: clk, dp: &dataplane{bind: multipath.New(conntest.New(1))}, replyc: make(chan probeReply, 16)}
	reqs := newRequestTimes(base, nil, []netip.AddrPort{path})
	a.probes.Store(&probeIndex{
		bySender:  map[health.SenderID]*probePeer{ours.Theirs(): {name: "b", key: ours, rf: &replayState{}, reqs: reqs}},
		pathAddrs: map[netip.AddrPort]struct{}{path: {}},
		reqs:      map[string]*requestTimes{"b": reqs},
		reqBase:   base,
	})
	msg := func(kind health.Kind, nonce uint64) []byte {
		var out [health.ProbeSize]byte
		health.Marshal(&out, &health.Message{Kind: kind, Nonce: nonce, Epoch: 7})
		theirs.Seal(&out)
		return out[:]
	}

	var out multipath.Outbox
	a.handleProbe(msg(health.KindRequest, 10), path, &out)
	if out.Len() != 1 {
		t.Fatalf("a fresh request left %d answers to send, want 1", out.Len())
	}
	if got := reqs.last(path); !got.Equal(clk.t) {
		t.Fatalf("after a fresh request: last %v, want %v", got, clk.t)
	}
	first := clk.t

	clk.t = clk.t.Add(time.Second)
	a.handleProbe(msg(health.KindRequest, 10), path, &out) // replay
	forged := msg(health.KindRequest, 11)
	forged[len(forged)-1] ^= 1
	a.handleProbe(forged, path, &out)
	a.handleProbe(msg(health.KindReply, 12), path, &out)
	a.handleProbe(msg(health.KindRequest, 13), other, &out)
	if got := reqs.last(path, other); !got.Equal(first) {
		t.Fatalf("after a replay, a forgery, a reply and a stranger's request: last %v, want still %v", got, first)
	}

	mapped := netip.AddrPortFrom(netip.AddrFrom16(path.Addr().As16()), path.Port())
	a.handleProbe(msg(health.KindRequest, 14), mapped, &out)
	if got := reqs.last(path); !got.Equal(clk.t) {
		t.Fatalf("after a fresh request from the mapped address: last %v, want %v", got, clk.t)
	}
}

// TestRequestTimesCarryOver: a rebuilt index keeps the times of the
// addresses that stay, starts new ones at zero, and drops the others.
func TestRequestTimesCarryOver(t *testing.T) {
	base := time.Unix(1000, 0)
	a1 := netip.MustParseAddrPort("192.0.2.1:1")
	a2 := netip.MustParseAddrPort("192.0.2.2:2")
	a3 := netip.MustParseAddrPort("192.0.2.3:3")
	old := newRequestTimes(base, nil, []netip.AddrPort{a1, a2, {}})
	old.record(a1, base.Add(time.Second))
	old.record(a2, base.Add(2*time.Second))
	r := newRequestTimes(base, old, []netip.AddrPort{a1, a3})
	if got := r.last(a1); !got.Equal(base.Add(time.Second)) {
		t.Errorf("a1: %v, want carried over %v", got, base.Add(time.Second))
	}
	if got := r.last(a2, a3); !got.IsZero() {
		t.Errorf("a2, a3: %v, want none", got)
	}
	r.record(a2, base.Add(3*time.Second)) // no longer a path address
	if got := r.last(a1, a2, a3); !got.Equal(base.Add(time.Second)) {
		t.Errorf("last of all: %v, want %v", got, base.Add(time.Second))
	}
	var none *requestTimes
	none.record(a1, base)
	if !none.last(a1).IsZero() {
		t.Error("a nil record has a time")
	}
}
