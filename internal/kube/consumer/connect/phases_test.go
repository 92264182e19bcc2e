package connect

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
)

// failingFC is the consumer whose ForeignCluster of id answers fc, err.
type failingFC struct {
	*fakeConsumer
	id  string
	fc  peering.ForeignCluster
	err error
}

func (c failingFC) ForeignCluster(ctx context.Context, id string) (peering.ForeignCluster, error) {
	if id == c.id {
		return c.fc, c.err
	}
	return c.fakeConsumer.ForeignCluster(ctx, id)
}

// phase starts one Sync of FCC x by hand: its sides and its status.
func (w *world) phase(a, b string) (*v1alpha1.ForeignClusterConnection, *status, *side, *side) {
	w.addFCC("x", a, b, 0)
	f := w.fcc("x")
	return f, newStatus(f, w.clock.t), &side{id: a}, &side{id: b}
}

func condOf(st *status, typ string) string {
	if c := meta.FindStatusCondition(st.s.Conditions, typ); c != nil {
		return string(c.Status) + "/" + c.Reason
	}
	return "none"
}

func TestKnowClusters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		a, b    string
		setup   func(w *world)
		wantOK  bool
		requeue bool
		cond    string
	}{
		{"two providers", "a", "b", nil, true, false, "True/" + v1alpha1.ReasonKnown},
		{"the same cluster", "a", "a", nil, false, false, "False/" + v1alpha1.ReasonSameCluster},
		{"an older FCC for the pair", "a", "b", func(w *world) { w.addFCC("first", "b", "a", time.Hour) }, false, false, "False/" + v1alpha1.ReasonDuplicatePair},
		{"an unknown cluster", "a", "zz", nil, false, false, "False/" + v1alpha1.ReasonUnknownCluster},
		{"Liqo not ready", "a", "b", func(w *world) {
			w.r.Consumer = failingFC{w.c, "b", peering.ForeignCluster{}, fmt.Errorf("tenant namespace: %w", peering.ErrNotReady)}
		}, false, true, "False/" + v1alpha1.ReasonLiqoNotReady},
		{"not a provider", "a", "b", func(w *world) {
			w.r.Consumer = failingFC{w.c, "b", peering.ForeignCluster{ID: "b", Role: "Consumer"}, errors.New("not a provider")}
		}, false, false, "False/" + v1alpha1.ReasonNotProvider},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			f, st, a, b := w.phase(tc.a, tc.b)
			ok, err := w.r.knowClusters(context.Background(), f, st, a, b)
			_, requeued := RequeueAfter(err)
			if ok != tc.wantOK || requeued != tc.requeue || (!requeued && err != nil) {
				t.Errorf("ok %v, err %v; want ok %v, requeue %v", ok, err, tc.wantOK, tc.requeue)
			}
			if got := condOf(st, v1alpha1.ConditionClustersKnown); got != tc.cond {
				t.Errorf("ClustersKnown %s, want %s", got, tc.cond)
			}
			if ok && (a.fc.RemoteTenant != tenA || b.fc.RemoteTenant != tenB) {
				t.Errorf("ForeignClusters not filled in: %+v %+v", a.fc, b.fc)
			}
		})
	}
}

func TestReachRelays(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(w *world)
		wantOK    bool
		reachable string
	}{
		{"both relays published", nil, true, "True/" + v1alpha1.ReasonReachable},
		{"a provider is down", func(w *world) { w.b.down = true }, false, "False/" + v1alpha1.ReasonProviderUnreachable},
		{"a relay is missing", func(w *world) { w.b.relays = nil }, false, "True/" + v1alpha1.ReasonReachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			f, st, a, b := w.phase("a", "b")
			if ok, err := w.r.knowClusters(context.Background(), f, st, a, b); !ok {
				t.Fatal(err)
			}
			ok, err := w.r.reachRelays(context.Background(), st, a, b)
			if _, requeued := RequeueAfter(err); ok != tc.wantOK || requeued == tc.wantOK {
				t.Errorf("ok %v, err %v; want ok %v and a requeue otherwise", ok, err, tc.wantOK)
			}
			if got := condOf(st, v1alpha1.ConditionProvidersReachable); got != tc.reachable {
				t.Errorf("ProvidersReachable %s, want %s", got, tc.reachable)
			}
			if ok && (a.relay == nil || b.relay == nil || a.prov == nil || b.prov == nil) {
				t.Error("sides not filled in")
			}
		})
	}
}

// refusing is a provider whose API server refuses every RelayPeer.
type refusing struct{ *fakeProvider }

func (refusing) ApplyRelayPeer(_ context.Context, _, name string, _, _ map[string]string, _ v1alpha1.RelayPeerSpec) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.Group, Kind: "RelayPeer"}, name,
		field.ErrorList{field.Invalid(field.NewPath("spec", "allowedIPs"), "x", "overlaps")})
}

func TestWritePeers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		refuseA   bool
		downA     bool
		wantErr   bool
		mapped    string
		wantBWrit bool
	}{
		{"both written", false, false, false, "none", true},
		{"a refuses: b is still written", true, false, false, "False/" + v1alpha1.ReasonRelayPeerRefused, true},
		{"a is down: the round stops", false, true, true, "none", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			f, st, a, b := w.phase("a", "b")
			if ok, err := w.r.knowClusters(ctx, f, st, a, b); !ok {
				t.Fatal(err)
			}
			if ok, err := w.r.reachRelays(ctx, st, a, b); !ok {
				t.Fatal(err)
			}
			if err := w.r.overlay(st, a, b); err != nil {
				t.Fatal(err)
			}
			res, err := w.r.mapping(ctx, f, st, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if tc.refuseA {
				a.prov = refusing{w.a}
			}
			w.a.down = tc.downA
			_, err = w.r.writePeers(ctx, f, st, a, b, res)
			if (err != nil) != tc.wantErr {
				t.Errorf("err %v, want an error %v", err, tc.wantErr)
			}
			if got := condOf(st, v1alpha1.ConditionAddressesMapped); tc.mapped != "none" && got != tc.mapped {
				t.Errorf("AddressesMapped %s, want %s", got, tc.mapped)
			}
			if got := w.b.peer(tenB, PeerName("c", "a")) != nil; got != tc.wantBWrit {
				t.Errorf("b's RelayPeer for a written %v, want %v", got, tc.wantBWrit)
			}
		})
	}
}
