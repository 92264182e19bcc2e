package connect

import (
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// The consumer path carries the FCC's consumerBias (default 5ms), so
// that the relays fail back to a repaired direct path that measures like
// the consumer path; the direct path carries none.
func TestSyncWritesConsumerBias(t *testing.T) {
	for _, tc := range []struct {
		set, want v1alpha1.Duration
	}{{"", DefaultConsumerBias}, {"20ms", "20ms"}, {"0s", "0s"}} {
		w := newWorld(t)
		w.addFCC("ab", "a", "b", time.Hour)
		w.c.fccs["ab"].Spec.Paths.ConsumerBias = tc.set
		w.settle("ab")
		for _, rp := range []*v1alpha1.RelayPeer{w.a.peer(tenA, "c-b"), w.b.peer(tenB, "c-a")} {
			if rp == nil {
				t.Fatalf("consumerBias %q: a RelayPeer is missing", tc.set)
			}
			for _, p := range rp.Spec.Paths {
				want := v1alpha1.Duration("")
				if p.Name == "consumer" {
					want = tc.want
				}
				if p.Bias != want {
					t.Errorf("consumerBias %q: %s's path %s has bias %q, want %q", tc.set, rp.Name, p.Name, p.Bias, want)
				}
			}
		}
	}
}

func TestKeyChangeReachesTheOtherSide(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	r := w.b.relays[tenB+"/relay-b"]
	r.Status.PublicKey = keyB2
	w.b.relays[tenB+"/relay-b"] = r
	w.b.takeWrites()
	w.settle("ab")
	if k := w.a.peer(tenA, "c-b").Spec.PublicKey; k != keyB2 {
		t.Errorf("a's RelayPeer for b has key %s, want %s", k, keyB2)
	}
	if wb := w.b.takeWrites(); len(wb) != 0 {
		t.Errorf("b's RelayPeer rewritten for a's unchanged key: %v", wb)
	}
}

// A staged rotation of b's key reaches a's RelayPeer as nextPublicKey, and
// the switch replaces publicKey and clears it.
func TestStagedKeyReachesTheOtherSide(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	r := w.b.relays[tenB+"/relay-b"]
	old := r.Status.PublicKey
	r.Status.NextPublicKey = keyB2
	w.b.relays[tenB+"/relay-b"] = r
	w.settle("ab")
	if s := w.a.peer(tenA, "c-b").Spec; s.PublicKey != old || s.NextPublicKey != keyB2 {
		t.Errorf("staged: a's RelayPeer for b has key %s next %s, want %s next %s", s.PublicKey, s.NextPublicKey, old, keyB2)
	}
	r.Status.PublicKey, r.Status.NextPublicKey = keyB2, ""
	w.b.relays[tenB+"/relay-b"] = r
	w.settle("ab")
	if s := w.a.peer(tenA, "c-b").Spec; s.PublicKey != keyB2 || s.NextPublicKey != "" {
		t.Errorf("switched: a's RelayPeer for b has key %s next %q, want %s and none", s.PublicKey, s.NextPublicKey, keyB2)
	}
}
