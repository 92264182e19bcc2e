package connect

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

func TestSyncWritesBothRelayPeers(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")

	pa := w.a.peer(tenA, "c-b")
	pb := w.b.peer(tenB, "c-a")
	if pa == nil || pb == nil {
		t.Fatalf("RelayPeers: a has %v, b has %v", pa, pb)
	}
	// Each side gets the other relay's published overlay address (a
	// 100.80.0.1, b .2).
	// A's pods dial b's pod pb1 at A's view of ext(pb1) = 10.90.0.7; A's
	// pod pa1 (real 10.0.0.5) is seen by B at B's view of ext(pa1).
	if got, want := strs(pa.Spec.Prefixes), []string{"100.80.0.2/32", "10.90.0.7/32"}; !slices.Equal(got, want) {
		t.Errorf("a's prefixes = %v, want %v", got, want)
	}
	if got, want := pa.Spec.SeesUs, []v1alpha1.Mapping{{Real: "10.0.0.5/32", As: "10.91.0.5/32"}}; !slices.Equal(got, want) {
		t.Errorf("a's seesUs = %v, want %v", got, want)
	}
	if got, want := strs(pb.Spec.Prefixes), []string{"100.80.0.1/32", "10.91.0.5/32"}; !slices.Equal(got, want) {
		t.Errorf("b's prefixes = %v, want %v", got, want)
	}
	if got, want := pb.Spec.SeesUs, []v1alpha1.Mapping{{Real: "10.0.0.7/32", As: "10.90.0.7/32"}}; !slices.Equal(got, want) {
		t.Errorf("b's seesUs = %v, want %v", got, want)
	}
	if pa.Spec.PublicKey != keyB || pb.Spec.PublicKey != keyA {
		t.Errorf("keys: a's peer has %s, b's has %s", pa.Spec.PublicKey, pb.Spec.PublicKey)
	}
	// Consumer path: the IP for b's relay (c sees its pod 10.0.0.200 at
	// 10.71.0.200) got ext 10.80.1.x, which a's RelayPeer carries in C's
	// space (a's relay sends from inside its gateway pod, where no Liqo
	// DNAT turns a's view 10.90/16 back into it: liqo-addressing.md §9).
	ipA, ipB := w.c.ips[RelayIPName("a", addr("10.70.0.100"))], w.c.ips[RelayIPName("b", addr("10.71.0.200"))]
	if ipA == nil || ipB == nil {
		t.Fatalf("consumer IPs: %v", w.c.ips)
	}
	wantPaths := []v1alpha1.Path{{Name: "direct", Endpoint: "b.example:51820"},
		{Name: "consumer", Endpoint: fmt.Sprintf("10.80.%d.%d:51820", ipB.Status.As4()[2], ipB.Status.As4()[3]), Bias: DefaultConsumerBias}}
	if !slices.Equal(pa.Spec.Paths, wantPaths) {
		t.Errorf("a's paths = %v, want %v", pa.Spec.Paths, wantPaths)
	}
	for _, rp := range []*v1alpha1.RelayPeer{pa, pb} {
		if rp.Labels[LabelConsumer] != "c" || rp.Labels[v1alpha1.RelayLabel] == "" || rp.Annotations[AnnotationConnection] != "ab" {
			t.Errorf("%s: labels %v annotations %v", rp.Name, rp.Labels, rp.Annotations)
		}
	}
	f := w.fcc("ab")
	if f.Status.Phase != v1alpha1.PhaseProvisioning || f.Status.AToB.Endpoints != 1 || f.Status.OverlayA != "100.80.0.1" {
		t.Errorf("status = %+v", f.Status)
	}
	if !slices.Contains(f.Finalizers, v1alpha1.FCCFinalizer) {
		t.Errorf("finalizers = %v", f.Finalizers)
	}

	// The relays report: both directions up, the FCC is Connected.
	w.a.setPeerStatus(tenA, "c-b", v1alpha1.RelayPeerStatus{ActivePath: "direct", Reachable: true, RTT: "3ms"})
	w.b.setPeerStatus(tenB, "c-a", v1alpha1.RelayPeerStatus{ActivePath: "consumer", Reachable: true, RTT: "9ms"})
	w.settle("ab")
	f = w.fcc("ab")
	if f.Status.Phase != v1alpha1.PhaseConnected || f.Status.AToB.ActivePath != "direct" || f.Status.BToA.RTT != "9ms" {
		t.Errorf("status = %+v", f.Status)
	}
	if c := w.cond("ab", v1alpha1.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v", c)
	}
	// One direction down: Degraded.
	w.b.setPeerStatus(tenB, "c-a", v1alpha1.RelayPeerStatus{})
	w.settle("ab")
	if p := w.fcc("ab").Status.Phase; p != v1alpha1.PhaseDegraded {
		t.Errorf("phase = %s, want Degraded", p)
	}
}

func TestSecondSyncWritesNothing(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	w.a.takeWrites()
	w.b.takeWrites()
	w.c.takeWrites()
	for i := 0; i < 3; i++ {
		w.clock.Advance(time.Minute)
		w.settle("ab")
	}
	if wa, wb, wc := w.a.takeWrites(), w.b.takeWrites(), w.c.takeWrites(); len(wa)+len(wb)+len(wc) != 0 {
		t.Errorf("resyncs wrote: a %v, b %v, c %v", wa, wb, wc)
	}
}

func TestChurnUpdatesBothSides(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	// A new pod on b, and pa1 deleted.
	w.c.pods = []podmap.Pod{
		{Name: "ns/pb1", Consumer: addr("10.71.0.7"), Ext: addr("10.80.0.7")},
		{Name: "ns/pb2", Consumer: addr("10.71.3.9"), Ext: addr("10.80.0.9")},
	}
	w.settle("ab")
	pa, pb := w.a.peer(tenA, "c-b"), w.b.peer(tenB, "c-a")
	if got, want := strs(pa.Spec.Prefixes), []string{"100.80.0.2/32", "10.90.0.7/32", "10.90.0.9/32"}; !slices.Equal(got, want) {
		t.Errorf("a's prefixes = %v, want %v", got, want)
	}
	if len(pa.Spec.SeesUs) != 0 {
		t.Errorf("a's seesUs = %v, want none", pa.Spec.SeesUs)
	}
	if got, want := pb.Spec.SeesUs, []v1alpha1.Mapping{{Real: "10.0.0.7/32", As: "10.90.0.7/32"}, {Real: "10.0.3.9/32", As: "10.90.0.9/32"}}; !slices.Equal(got, want) {
		t.Errorf("b's seesUs = %v, want %v", got, want)
	}
	if got := strs(pb.Spec.Prefixes); !slices.Equal(got, []string{"100.80.0.1/32"}) {
		t.Errorf("b's prefixes = %v", got)
	}
}

func TestHandDeletedRelayPeerIsRecreated(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	before := w.a.peer(tenA, "c-b")
	_ = w.a.DeleteRelayPeer(context.Background(), tenA, "c-b")
	w.settle("ab")
	after := w.a.peer(tenA, "c-b")
	if after == nil || !sameSpec(before.Spec, after.Spec) {
		t.Fatalf("recreated RelayPeer = %+v, want spec %+v", after, before.Spec)
	}
}

func TestFCCEditUpdatesBothSides(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	f := w.c.fccs["ab"]
	off := false
	f.Spec.Paths.Direct = &off
	f.Spec.Health = &v1alpha1.Health{Interval: "200ms"}
	f.Generation++
	w.settle("ab")
	for _, rp := range []*v1alpha1.RelayPeer{w.a.peer(tenA, "c-b"), w.b.peer(tenB, "c-a")} {
		if len(rp.Spec.Paths) != 1 || rp.Spec.Paths[0].Name != "consumer" || rp.Spec.Health == nil || rp.Spec.Health.Interval != "200ms" {
			t.Errorf("%s: paths %v health %+v", rp.Name, rp.Spec.Paths, rp.Spec.Health)
		}
	}
	if g := w.fcc("ab").Status.ObservedGeneration; g != 2 {
		t.Errorf("observedGeneration = %d, want 2", g)
	}
}

func TestGatewayMoveRecreatesTheConsumerIP(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	old := RelayIPName("b", addr("10.71.0.200"))
	w.b.gateway = addr("10.0.9.1") // a gateway restart: new pod IP
	w.settle("ab")
	if _, ok := w.c.ips[old]; ok {
		t.Errorf("old IP %s still there", old)
	}
	nw := w.c.ips[RelayIPName("b", addr("10.71.9.1"))]
	if nw == nil || nw.Spec != addr("10.71.9.1") || !nw.Status.IsValid() {
		t.Fatalf("new IP = %+v", nw)
	}
	want := fmt.Sprintf("10.80.%d.%d:51820", nw.Status.As4()[2], nw.Status.As4()[3])
	if p := w.a.peer(tenA, "c-b").Spec.Paths; p[len(p)-1].Endpoint != want {
		t.Errorf("a's consumer path = %v, want %s", p, want)
	}
}

func TestConditions(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(w *world)
		phase  v1alpha1.ConnectionPhase
		typ    string
		reason string
	}{
		{"unknown cluster", func(w *world) { w.addFCC("x", "a", "zz", 0) }, v1alpha1.PhaseFailed, v1alpha1.ConditionClustersKnown, v1alpha1.ReasonUnknownCluster},
		{"same cluster", func(w *world) { w.addFCC("x", "a", "a", 0) }, v1alpha1.PhaseFailed, v1alpha1.ConditionClustersKnown, v1alpha1.ReasonSameCluster},
		{"duplicate pair", func(w *world) { w.addFCC("first", "b", "a", time.Hour); w.addFCC("x", "a", "b", 0) },
			v1alpha1.PhaseFailed, v1alpha1.ConditionClustersKnown, v1alpha1.ReasonDuplicatePair},
		{"provider down", func(w *world) { w.addFCC("x", "a", "b", 0); w.b.down = true },
			v1alpha1.PhasePending, v1alpha1.ConditionProvidersReachable, v1alpha1.ReasonProviderUnreachable},
		{"relay missing", func(w *world) { w.addFCC("x", "a", "b", 0); w.b.relays = nil },
			v1alpha1.PhasePending, v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayMissing},
		{"relay without key", func(w *world) {
			w.addFCC("x", "a", "b", 0)
			r := w.a.relays[tenA+"/relay-a"]
			r.Status.PublicKey = ""
			w.a.relays[tenA+"/relay-a"] = r
		}, v1alpha1.PhasePending, v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayNotReady},
		{"two pods one address", func(w *world) {
			w.addFCC("x", "a", "b", 0)
			w.c.pods = append(w.c.pods, podmap.Pod{Name: "ns/pb9", Consumer: addr("10.71.0.9"), Ext: addr("10.80.0.7")})
		}, v1alpha1.PhaseProvisioning, v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(w)
			for i := 0; i < 3; i++ {
				_ = w.sync("x")
				w.c.ipam()
			}
			f := w.fcc("x")
			c := w.cond("x", tc.typ)
			ready := w.cond("x", v1alpha1.ConditionReady)
			if f.Status.Phase != tc.phase && !(tc.phase == v1alpha1.PhaseProvisioning && f.Status.Phase == v1alpha1.PhaseFailed) {
				t.Errorf("phase = %s, want %s", f.Status.Phase, tc.phase)
			}
			if c.Status != metav1.ConditionFalse || c.Reason != tc.reason || c.Message == "" {
				t.Errorf("%s = %+v, want False/%s", tc.typ, c, tc.reason)
			}
			if ready.Status != metav1.ConditionFalse {
				t.Errorf("Ready = %+v", ready)
			}
		})
	}
}

func TestAddressConflictLeavesTheClaimedAddressOut(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.c.pods = append(w.c.pods, podmap.Pod{Name: "ns/pb9", Consumer: addr("10.71.0.9"), Ext: addr("10.80.0.7")})
	for i := 0; i < 3; i++ {
		_ = w.sync("ab")
		w.c.ipam()
	}
	pa := w.a.peer(tenA, "c-b")
	if pa == nil {
		t.Fatal("no RelayPeer in a")
	}
	if got := strs(pa.Spec.Prefixes); !slices.Equal(got, []string{"100.80.0.2/32"}) {
		t.Errorf("a's prefixes = %v, want only b's relay (10.90.0.7 is claimed twice)", got)
	}
	if c := w.cond("ab", v1alpha1.ConditionAddressesMapped); !strings.Contains(c.Message, "10.90.0.7/32") {
		t.Errorf("AddressesMapped = %+v", c)
	}
}

func TestConsumersStayIndependent(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	// A second consumer d's operator connects the same providers: its
	// RelayPeers have other names, and c's are untouched.
	w2 := newWorld(t)
	w2.a, w2.b = w.a, w.b
	w2.dialer.providers = map[string]*fakeProvider{"a": w.a, "b": w.b}
	w2.r.ConsumerID = "d"
	w2.addFCC("ab", "a", "b", time.Hour)
	w.a.takeWrites()
	w2.settle("ab")
	if w.a.peer(tenA, "c-b") == nil || w.a.peer(tenA, "d-b") == nil {
		t.Fatalf("a's RelayPeers: %v", w.a.peers)
	}
	// d's first write has the direct path only (its consumer IP waits for
	// the IPAM), the second adds the consumer path: neither touches c's.
	for _, wr := range w.a.takeWrites() {
		if wr != "apply "+tenA+"/d-b" {
			t.Errorf("consumer d's operator wrote %s", wr)
		}
	}
}

type countLimiter struct{ left int }

func (l *countLimiter) Reserve(time.Time) time.Duration {
	if l.left == 0 {
		return time.Second
	}
	l.left--
	return 0
}

func TestWritesAreRateLimited(t *testing.T) {
	w := newWorld(t)
	l := &countLimiter{left: 1}
	w.r.Limiter = l
	w.addFCC("ab", "a", "b", time.Hour)
	for i := 0; i < 3; i++ {
		_ = w.sync("ab")
		w.c.ipam()
	}
	n := len(w.a.takeWrites()) + len(w.b.takeWrites())
	if n != 1 {
		t.Fatalf("%d RelayPeer writes with a budget of 1", n)
	}
	d, ok := RequeueAfter(w.sync("ab"))
	if !ok || d != time.Second {
		t.Errorf("held-back write: requeue %v %v, want 1s", d, ok)
	}
	l.left = 10
	w.settle("ab")
	if w.a.peer(tenA, "c-b") == nil || w.b.peer(tenB, "c-a") == nil {
		t.Error("RelayPeers not written once the limiter allows")
	}
}

// TestOverlayAddressesFromTheRelays: the RelayPeers carry the overlay
// addresses the relays publish, a change reaches the other side, and two
// relays that publish the same address get AddressConflict instead of
// RelayPeers that would route one relay's address to the other.
func TestOverlayAddressesFromTheRelays(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	if got := strs(w.b.peer(tenB, "c-a").Spec.Prefixes); got[0] != "100.80.0.1/32" {
		t.Errorf("b's prefixes = %v, want a's overlay 100.80.0.1/32 first", got)
	}
	setAddrs := func(p *fakeProvider, key string, addrs ...string) {
		p.mu.Lock()
		rl := p.relays[key]
		rl.Status.Addresses = addrs
		p.relays[key] = rl
		p.mu.Unlock()
	}
	// A relay restarted with another address: the other side follows.
	setAddrs(w.a, tenA+"/relay-a", "100.80.7.7/32")
	w.settle("ab")
	if got := strs(w.b.peer(tenB, "c-a").Spec.Prefixes); got[0] != "100.80.7.7/32" {
		t.Errorf("after a's new address, b's prefixes = %v", got)
	}
	if f := w.fcc("ab"); f.Status.OverlayA != "100.80.7.7" || f.Status.OverlayB != "100.80.0.2" {
		t.Errorf("status overlayA %q overlayB %q", f.Status.OverlayA, f.Status.OverlayB)
	}
	// Both relays on 100.80.0.2: a conflict, named, and the peers keep
	// what they had.
	setAddrs(w.a, tenA+"/relay-a", "100.80.0.2/32")
	_ = w.sync("ab")
	c := w.cond("ab", v1alpha1.ConditionAddressesMapped)
	if c.Status != "False" || c.Reason != v1alpha1.ReasonAddressConflict || !strings.Contains(c.Message, "100.80.0.2") {
		t.Errorf("AddressesMapped = %+v, want False/%s naming 100.80.0.2", c, v1alpha1.ReasonAddressConflict)
	}
	if got := strs(w.b.peer(tenB, "c-a").Spec.Prefixes); got[0] != "100.80.7.7/32" {
		t.Errorf("a conflict rewrote b's prefixes: %v", got)
	}
}

func TestPeerNameIsALabel(t *testing.T) {
	long := strings.Repeat("a", 36)
	n := PeerName(long+"-1111", long+"-2222")
	if len(n) > 63 || n == PeerName(long+"-1111", long+"-3333") {
		t.Errorf("PeerName = %q (%d)", n, len(n))
	}
	if PeerName("c", "b") != "c-b" {
		t.Errorf("short names are kept: %q", PeerName("c", "b"))
	}
}

func TestTooManyPodsAreCappedNotRefused(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.c.pods = nil
	for i := 0; i < MaxPeerItems+10; i++ {
		w.c.pods = append(w.c.pods, podmap.Pod{
			Name:     fmt.Sprintf("ns/pb%05d", i),
			Consumer: netip.AddrFrom4([4]byte{10, 71, byte(i >> 8), byte(i)}),
			Ext:      netip.AddrFrom4([4]byte{10, 80, 100 + byte(i>>8), byte(i)}),
		})
	}
	for i := 0; i < 3; i++ {
		_ = w.sync("ab")
		w.c.ipam()
	}
	pa, pb := w.a.peer(tenA, "c-b"), w.b.peer(tenB, "c-a")
	if pa == nil || len(pa.Spec.Prefixes) != MaxPeerItems || len(pb.Spec.SeesUs) != MaxPeerItems {
		t.Fatalf("RelayPeers not capped at %d", MaxPeerItems)
	}
	if c := w.cond("ab", v1alpha1.ConditionAddressesMapped); c.Reason != v1alpha1.ReasonTooManyPods {
		t.Errorf("AddressesMapped = %+v", c)
	}
}

func TestForbiddenProviderSaysWhichRoleToBind(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.b.err = apierrors.NewForbidden(schema.GroupResource{Group: v1alpha1.Group, Resource: "relays"}, "", errors.New("no RBAC"))
	_ = w.sync("ab")
	c := w.cond("ab", v1alpha1.ConditionProvidersReachable)
	if c.Reason != v1alpha1.ReasonProviderForbidden || !strings.Contains(c.Message, "operator-provider-role.yaml") {
		t.Errorf("ProvidersReachable = %+v", c)
	}
}
