package connect

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// MaxPeerItems is the RelayPeer API's limit on prefixes and on seesUs
// (api/v1alpha1, +kubebuilder:validation:MaxItems): a RelayPeer over it
// would be refused whole.
const MaxPeerItems = 8192

// copyPeerKey copies the peer relay's keys into the RelayPeer that leads to
// it. It is the one place a key crosses from one provider to the other. A
// rotation (docs/protocol.md, "Key rotation") crosses here twice: the
// staged key (status.nextPublicKey) becomes the RelayPeer's nextPublicKey,
// so this side stages it; after the switch, status.publicKey is the new
// key and nextPublicKey is empty again.
func copyPeerKey(spec *v1alpha1.RelayPeerSpec, peer *v1alpha1.Relay) {
	spec.PublicKey = peer.Status.PublicKey
	spec.NextPublicKey = ""
	if k := peer.Status.NextPublicKey; k != "" && k != peer.Status.PublicKey {
		spec.NextPublicKey = k
	}
}

// desired is x's RelayPeer for y. It reports false when there is nothing
// to write yet (no path ready).
func (r *Reconciler) desired(f *v1alpha1.ForeignClusterConnection, st *status, x, y *side, res podmap.Result) (v1alpha1.RelayPeerSpec, bool) {
	mine := res.A
	if x.id == f.Spec.ClusterB {
		mine = res.B
	}
	var spec v1alpha1.RelayPeerSpec
	copyPeerKey(&spec, y.relay)
	for _, o := range y.overlay {
		spec.Prefixes = append(spec.Prefixes, v1alpha1.Prefix(o.String()))
	}
	for _, p := range mine.Prefixes {
		spec.Prefixes = append(spec.Prefixes, v1alpha1.Prefix(p.String()))
	}
	for _, m := range mine.SeesUs {
		spec.SeesUs = append(spec.SeesUs, v1alpha1.Mapping{Real: v1alpha1.Prefix(m.Real.String()), As: v1alpha1.Prefix(m.As.String())})
	}
	if directPath(f) {
		for i, ep := range y.relay.Status.Endpoints {
			name := "direct"
			if i > 0 {
				name = "direct-" + strconv.Itoa(i+1)
			}
			spec.Paths = append(spec.Paths, v1alpha1.Path{Name: name, Endpoint: ep})
		}
	}
	if consumerPath(f) && y.endpoint.IsValid() {
		// The endpoint stays in C's space (the IP's status.ip unchanged):
		// the relay's datagrams start in the gateway pod and cross none of
		// Liqo's PREROUTING DNAT that would turn x's view back into C's
		// (docs/liqo-addressing.md §9). It must lie in C's external CIDR,
		// which the relay's liqo.consumer.cidr routes into Liqo's tunnel.
		if x.external.Real.Contains(y.endpoint) {
			port := strconv.Itoa(int(y.relay.Status.ListenPort))
			spec.Paths = append(spec.Paths, v1alpha1.Path{Name: "consumer", Endpoint: net.JoinHostPort(y.endpoint.String(), port), Bias: consumerBias(f)})
		} else {
			st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict,
				"%s's relay endpoint %s is outside the consumer's external CIDR %s as %s has it", y.id, y.endpoint, x.external.Real, x.id)
		}
	}
	if len(spec.Prefixes) > MaxPeerItems || len(spec.SeesUs) > MaxPeerItems {
		st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonTooManyPods,
			"%s's RelayPeer for %s would carry %d prefixes and %d seesUs, over the API's limit of %d: only the first %d of each (by pod name) are carried",
			x.id, y.id, len(spec.Prefixes), len(spec.SeesUs), MaxPeerItems, MaxPeerItems)
		spec.Prefixes = spec.Prefixes[:min(len(spec.Prefixes), MaxPeerItems)]
		spec.SeesUs = spec.SeesUs[:min(len(spec.SeesUs), MaxPeerItems)]
	}
	spec.Health = f.Spec.Health.DeepCopy()
	if len(spec.Paths) == 0 {
		st.pending = true
		return spec, false
	}
	return spec, true
}

func (r *Reconciler) peerMeta(f *v1alpha1.ForeignClusterConnection, x, y *side) (labels, annotations map[string]string) {
	return map[string]string{
			v1alpha1.RelayLabel: x.relay.Name,
			LabelConsumer:       r.ConsumerID,
			LabelPeerCluster:    y.id,
			LabelManagedBy:      ManagedBy,
		}, map[string]string{
			AnnotationConnection: f.Name,
		}
}

// write applies x's RelayPeer for y when it differs from what x holds. It
// returns how long to wait when the limiter held the write back.
func (r *Reconciler) write(ctx context.Context, f *v1alpha1.ForeignClusterConnection, x, y *side, spec v1alpha1.RelayPeerSpec) (wait time.Duration, err error) {
	ns, name := x.fc.RemoteTenant, PeerName(r.ConsumerID, y.id)
	cur, err := x.prov.RelayPeer(ctx, ns, name)
	if err != nil {
		return 0, err
	}
	x.peer = cur
	labels, ann := r.peerMeta(f, x, y)
	if cur != nil && sameSpec(cur.Spec, spec) && subset(labels, cur.Labels) && subset(ann, cur.Annotations) {
		x.written = true
		return 0, nil
	}
	if r.Limiter != nil {
		if d := r.Limiter.Reserve(r.now()); d > 0 {
			return d, nil
		}
	}
	if err := x.prov.ApplyRelayPeer(ctx, ns, name, labels, ann, spec); err != nil {
		return 0, err
	}
	x.written = true
	if r.Counters.Writes != nil {
		r.Counters.Writes("RelayPeer")
	}
	verb := "updated"
	if cur == nil {
		verb = "created"
	}
	r.log().Info("RelayPeer "+verb, "fcc", f.Name, "cluster", x.id, "relaypeer", ns+"/"+name,
		"prefixes", len(spec.Prefixes), "paths", len(spec.Paths))
	r.event(f, "Normal", "RelayPeerWritten", "%s RelayPeer %s/%s in %s (%d prefixes, %d paths)", verb, ns, name, x.id, len(spec.Prefixes), len(spec.Paths))
	return 0, nil
}

// sameSpec compares specs as the API server stores them (nil and empty
// lists are the same).
func sameSpec(a, b v1alpha1.RelayPeerSpec) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

func subset(want, have map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}
