package connect

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// bigWorld is newWorld with n pods on each provider.
func bigWorld(tb testing.TB, n int) *world {
	t, _ := tb.(*testing.T)
	w := newWorld(t)
	w.c.pods = nil
	for i := 0; i < n; i++ {
		hi, lo := byte(i>>8), byte(i)
		w.c.pods = append(w.c.pods,
			podmap.Pod{Name: fmt.Sprintf("ns/pa%05d", i), Consumer: netip.AddrFrom4([4]byte{10, 70, hi, lo}), Ext: netip.AddrFrom4([4]byte{10, 80, 64 + hi, lo})},
			podmap.Pod{Name: fmt.Sprintf("ns/pb%05d", i), Consumer: netip.AddrFrom4([4]byte{10, 71, hi, lo}), Ext: netip.AddrFrom4([4]byte{10, 80, 128 + hi, lo})})
	}
	w.addFCC("ab", "a", "b", time.Hour)
	return w
}

// TestRelayPeerSizeAtTheLimit reports the size of a RelayPeer spec at
// the API's limit: it must stay well under etcd's 1.5 MB request limit.
func TestRelayPeerSizeAtTheLimit(t *testing.T) {
	w := bigWorld(t, MaxPeerItems-1) // one prefix is the overlay address
	w.settle("ab")
	rp := w.a.peer(tenA, "c-b")
	b, err := json.Marshal(rp.Spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RelayPeer spec with %d prefixes and %d seesUs: %d bytes of JSON", len(rp.Spec.Prefixes), len(rp.Spec.SeesUs), len(b))
	if len(rp.Spec.Prefixes) != MaxPeerItems || len(b) > 1<<20 {
		t.Errorf("%d prefixes, %d bytes", len(rp.Spec.Prefixes), len(b))
	}
	if c := w.cond("ab", v1alpha1.ConditionAddressesMapped); c.Status != "True" {
		t.Errorf("AddressesMapped = %+v", c)
	}
}

// BenchmarkSyncNoChange is the cost of a resync with nothing to write:
// 5000 pods on each provider.
func BenchmarkSyncNoChange(b *testing.B) {
	w := bigWorld(b, 5000)
	w.t = &testing.T{}
	w.settle("ab")
	b.ResetTimer()
	for b.Loop() {
		if err := w.r.Sync(b.Context(), "ab"); err != nil {
			b.Fatal(err)
		}
	}
}
