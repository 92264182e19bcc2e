package connect

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

const (
	keyA  = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	keyB  = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="
	keyB2 = "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCA="
	tenA  = "liqo-tenant-c-in-a"
	tenB  = "liqo-tenant-c-in-b"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

// world is consumer c with providers a and b. Both providers use pod CIDR
// 10.0.0.0/16 (overlapping); c sees a's pods as 10.70/16 and b's as
// 10.71/16. c's external CIDR is 10.80/16; a sees it as 10.90/16, b as
// 10.91/16.
type world struct {
	t      *testing.T
	c      *fakeConsumer
	a, b   *fakeProvider
	dialer *fakeDialer
	events *fakeRecorder
	clock  *fakeClock
	r      *Reconciler
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, events: &fakeRecorder{}, clock: &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	w.c = &fakeConsumer{
		fcs: map[string]peering.ForeignCluster{
			"a": {ID: "a", LocalTenant: "liqo-tenant-a", RemoteTenant: tenA, Role: "Provider", NetworkEstablished: true},
			"b": {ID: "b", LocalTenant: "liqo-tenant-b", RemoteTenant: tenB, Role: "Provider", NetworkEstablished: true},
		},
		remaps: map[string][]podmap.Remap{
			"a": {{Real: pfx("10.0.0.0/16"), Seen: pfx("10.70.0.0/16")}},
			"b": {{Real: pfx("10.0.0.0/16"), Seen: pfx("10.71.0.0/16")}},
		},
		pods: []podmap.Pod{
			{Name: "ns/pa1", Consumer: addr("10.70.0.5"), Ext: addr("10.80.0.5")},
			{Name: "ns/pb1", Consumer: addr("10.71.0.7"), Ext: addr("10.80.0.7")},
		},
		ips:     map[string]*RelayIP{},
		nextExt: addr("10.80.1.1"),
		fccs:    map[string]*v1alpha1.ForeignClusterConnection{},
	}
	relay := func(ns, name, key, ep, overlay string) map[string]v1alpha1.Relay {
		return map[string]v1alpha1.Relay{ns + "/" + name: {
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Status: v1alpha1.RelayStatus{PublicKey: key, Endpoints: []string{ep}, ListenPort: 51820, Ready: true,
				Addresses: []string{overlay}},
		}}
	}
	w.a = &fakeProvider{id: "a", relays: relay(tenA, "relay-a", keyA, "a.example:51820", "100.80.0.1/32"), gateway: addr("10.0.0.100"),
		external: podmap.Remap{Real: pfx("10.80.0.0/16"), Seen: pfx("10.90.0.0/16")}, peers: map[string]*v1alpha1.RelayPeer{}}
	w.b = &fakeProvider{id: "b", relays: relay(tenB, "relay-b", keyB, "b.example:51820", "100.80.0.2/32"), gateway: addr("10.0.0.200"),
		external: podmap.Remap{Real: pfx("10.80.0.0/16"), Seen: pfx("10.91.0.0/16")}, peers: map[string]*v1alpha1.RelayPeer{}}
	w.dialer = &fakeDialer{providers: map[string]*fakeProvider{"a": w.a, "b": w.b}}
	w.r = &Reconciler{
		ConsumerID: "c", Consumer: w.c, Dialer: w.dialer, FCCs: w.c, Events: w.events,
		Now: w.clock.Now,
	}
	return w
}

func (w *world) addFCC(name, a, b string, age time.Duration) {
	w.c.fccs[name] = &v1alpha1.ForeignClusterConnection{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1, CreationTimestamp: metav1.NewTime(w.clock.t.Add(-age))},
		Spec:       v1alpha1.ForeignClusterConnectionSpec{ClusterA: a, ClusterB: b},
	}
}

func (w *world) sync(name string) error {
	w.t.Helper()
	return w.r.Sync(context.Background(), name)
}

// settle syncs, lets the IPAM answer, and syncs until nothing waits.
func (w *world) settle(name string) {
	w.t.Helper()
	for i := 0; i < 5; i++ {
		err := w.sync(name)
		if err == nil {
			return
		}
		if _, ok := RequeueAfter(err); !ok {
			w.t.Fatalf("sync %s: %v", name, err)
		}
		w.c.ipam()
	}
	w.t.Fatalf("sync %s does not settle", name)
}

func (w *world) fcc(name string) *v1alpha1.ForeignClusterConnection {
	f, ok := w.c.Get(name)
	if !ok {
		w.t.Fatalf("FCC %s is gone", name)
	}
	return f
}

func (w *world) cond(name, typ string) metav1.Condition {
	c := meta.FindStatusCondition(w.fcc(name).Status.Conditions, typ)
	if c == nil {
		w.t.Fatalf("FCC %s has no condition %s: %+v", name, typ, w.fcc(name).Status.Conditions)
	}
	return *c
}

func strs[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}
