package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// DefaultGiveUp is how long a deleting FCC waits for an unreachable
// provider before it leaves that provider's RelayPeer behind: long enough
// to ride out an API server restart or a short network cut, short enough
// that a peering removed for good does not block deletion for ever.
const DefaultGiveUp = 10 * time.Minute

// Lister gives the FCCs as the informer holds them.
type Lister interface {
	Get(name string) (*v1alpha1.ForeignClusterConnection, bool)
	List() []*v1alpha1.ForeignClusterConnection
}

// Recorder emits Kubernetes events (client-go's events.EventRecorder).
type Recorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Counters the reconciler counts into; any may be nil.
type Counters struct {
	// Writes counts writes to providers, by kind (RelayPeer, RelayPeerDelete).
	Writes func(kind string)
}

// Reconciler computes and writes what one FCC needs.
type Reconciler struct {
	// ConsumerID is this consumer's Liqo cluster ID.
	ConsumerID string
	Consumer   Consumer
	Dialer     Dialer
	FCCs       Lister
	Events     Recorder
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// GiveUp: see DefaultGiveUp; 0 means DefaultGiveUp.
	GiveUp time.Duration
	// Limiter bounds provider writes; nil means unbounded.
	Limiter  Limiter
	Counters Counters
}

// errRequeue asks the caller to run Sync again after a delay, without
// counting an error (waiting for Liqo, a relay, the IPAM or the limiter).
type errRequeue struct{ after time.Duration }

func (e errRequeue) Error() string { return fmt.Sprintf("requeue after %v", e.after) }

// RequeueAfter reports whether err asks for a later retry, and when.
func RequeueAfter(err error) (time.Duration, bool) {
	var r errRequeue
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}

// waitPoll is how soon Sync looks again at something another component
// must do (Liqo's IPAM, a relay publishing its key) when no watch event
// arrives first.
const waitPoll = 5 * time.Second

func (r *Reconciler) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

func (r *Reconciler) event(f *v1alpha1.ForeignClusterConnection, typ, reason, note string, args ...any) {
	if r.Events != nil {
		r.Events.Eventf(f, nil, typ, reason, "Reconcile", note, args...)
	}
}

// side is one provider of an FCC, as far as Sync got.
type side struct {
	id       string
	override *v1alpha1.KubeconfigSecretRef
	fc       peering.ForeignCluster
	prov     Provider
	relay    *v1alpha1.Relay
	pods     []podmap.Remap
	external podmap.Remap
	// endpoint is the relay's consumer-path address as the consumer
	// gives it (ext(relay)); invalid while pending.
	endpoint netip.Addr
	// overlay are the relay's own addresses as it publishes them
	// (Relay status.addresses, host prefixes).
	overlay []netip.Prefix
	peer    *v1alpha1.RelayPeer // this side's RelayPeer for the other
	// written: the RelayPeer holds the desired spec.
	written bool
}

// Sync reconciles the FCC named name. It returns an error wrapping
// errRequeue (see RequeueAfter) when it waits on something.
func (r *Reconciler) Sync(ctx context.Context, name string) error {
	f, ok := r.FCCs.Get(name)
	if !ok {
		return nil // deleted: the finalizer did the work
	}
	f = f.DeepCopy()
	if f.DeletionTimestamp != nil {
		return r.finalize(ctx, f)
	}
	st := newStatus(f, r.now())
	err := r.connect(ctx, f, st)
	if werr := r.writeStatus(ctx, f, st); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// connect does the work and records every finding in st: it checks the
// two clusters, reaches their relays, computes the overlay and the pod
// mapping, and writes both RelayPeers. A phase that cannot go on returns
// its error or requeue.
func (r *Reconciler) connect(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status) error {
	a := &side{id: f.Spec.ClusterA, override: f.Spec.KubeconfigA}
	b := &side{id: f.Spec.ClusterB, override: f.Spec.KubeconfigB}
	if ok, err := r.knowClusters(ctx, f, st, a, b); !ok {
		return err
	}
	if err := r.ensureFinalizer(ctx, f); err != nil {
		return err
	}
	if ok, err := r.reachRelays(ctx, st, a, b); !ok {
		return err
	}
	if err := r.overlay(st, a, b); err != nil {
		return err
	}
	res, err := r.mapping(ctx, f, st, a, b)
	if err != nil {
		return err
	}
	wait, err := r.writePeers(ctx, f, st, a, b, res)
	if err != nil {
		return err
	}
	st.directions(a, b, res)
	if wait > 0 {
		return errRequeue{wait}
	}
	if st.pending {
		return errRequeue{waitPoll}
	}
	return nil
}

// knowClusters checks that a and b are two different providers of this
// consumer, named by no older FCC, and fills in their ForeignClusters. It
// reports whether Sync goes on; when not, the error is nil for a finding
// in st that only an edit can change, a requeue while Liqo is not ready,
// or a failure.
func (r *Reconciler) knowClusters(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status, a, b *side) (bool, error) {
	if a.id == b.id {
		st.fail(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonSameCluster,
			"spec.clusterA and spec.clusterB are both %q: name two different providers", a.id)
		return false, nil
	}
	if older := r.olderTwin(f); older != "" {
		st.fail(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonDuplicatePair,
			"ForeignClusterConnection %s already connects %s and %s: delete this one", older, a.id, b.id)
		if !st.hadCondition(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonDuplicatePair) {
			r.event(f, "Warning", v1alpha1.ReasonDuplicatePair, "%s already connects %s and %s", older, a.id, b.id)
		}
		return false, nil
	}
	for _, s := range []*side{a, b} {
		fc, err := r.Consumer.ForeignCluster(ctx, s.id)
		switch {
		case errors.Is(err, ErrUnknownCluster):
			st.fail(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonUnknownCluster,
				"no ForeignCluster has cluster ID %q: check spec.clusterA/B against `kubectl get foreignclusters`", s.id)
			return false, nil
		case errors.Is(err, peering.ErrNotReady):
			st.wait(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonLiqoNotReady, "%v", err)
			return false, errRequeue{waitPoll}
		case err != nil && fc.ID != "":
			st.fail(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonNotProvider, "%v", err)
			return false, nil
		case err != nil:
			return false, fmt.Errorf("ForeignCluster %s: %w", s.id, err)
		}
		s.fc = fc
	}
	st.ok(v1alpha1.ConditionClustersKnown, v1alpha1.ReasonKnown, "both clusters are providers of this consumer")
	return true, nil
}

// reachRelays dials both providers and finds their Relays. It reports
// whether Sync goes on; when not, it requeues: a provider is unreachable,
// or a Relay is not published yet.
func (r *Reconciler) reachRelays(ctx context.Context, st *status, a, b *side) (bool, error) {
	var unreachable []error
	for _, s := range []*side{a, b} {
		p, err := r.Dialer.Provider(ctx, s.fc, s.override)
		if err == nil {
			s.relay, err = r.findRelay(ctx, p, s, st)
		}
		if err != nil && !errors.Is(err, errRelay) {
			unreachable = append(unreachable, fmt.Errorf("%s: %w", s.id, err))
		}
		s.prov = p
	}
	if len(unreachable) > 0 {
		st.unreachable(unreachable)
		return false, errRequeue{waitPoll}
	}
	st.ok(v1alpha1.ConditionProvidersReachable, v1alpha1.ReasonReachable, "the operator reaches both providers' API servers")
	if a.relay == nil || b.relay == nil {
		return false, errRequeue{waitPoll}
	}
	st.ok(v1alpha1.ConditionRelaysReady, v1alpha1.ReasonPublished, "both Relays publish a public key and endpoints")
	return true, nil
}

// writePeers writes, in each provider, the RelayPeer for the other's
// relay when it differs from the desired one. A RelayPeer the provider
// refuses is a finding in st, and the other direction is still written.
// It returns the longest wait the write limiter asked for.
func (r *Reconciler) writePeers(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status, a, b *side, res podmap.Result) (time.Duration, error) {
	wait := time.Duration(0)
	for _, pair := range [][2]*side{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		spec, ok := r.desired(f, st, x, y, res)
		if !ok {
			continue
		}
		d, err := r.write(ctx, f, x, y, spec)
		if apierrors.IsInvalid(err) {
			st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonRelayPeerRefused,
				"%s refused RelayPeer %s: %v", x.id, PeerName(r.ConsumerID, y.id), err)
			continue
		}
		if err != nil {
			st.unreachable([]error{fmt.Errorf("%s: %w", x.id, err)})
			return 0, err
		}
		wait = max(wait, d)
	}
	return wait, nil
}

// olderTwin returns the name of an older FCC (by creation, then name)
// for the same two clusters, "" when f is the first.
func (r *Reconciler) olderTwin(f *v1alpha1.ForeignClusterConnection) string {
	pair := func(x *v1alpha1.ForeignClusterConnection) [2]string {
		if x.Spec.ClusterA < x.Spec.ClusterB {
			return [2]string{x.Spec.ClusterA, x.Spec.ClusterB}
		}
		return [2]string{x.Spec.ClusterB, x.Spec.ClusterA}
	}
	me := pair(f)
	best := ""
	for _, o := range r.FCCs.List() {
		if o.Name == f.Name || o.DeletionTimestamp != nil || pair(o) != me {
			continue
		}
		ot, ft := o.CreationTimestamp.Time, f.CreationTimestamp.Time
		if ot.Before(ft) || (ot.Equal(ft) && o.Name < f.Name) {
			if best == "" || o.Name < best {
				best = o.Name
			}
		}
	}
	return best
}

func hasFinalizer(f *v1alpha1.ForeignClusterConnection) bool {
	for _, x := range f.Finalizers {
		if x == v1alpha1.FCCFinalizer {
			return true
		}
	}
	return false
}

// ensureFinalizer adds the finalizer before anything is written, so that
// nothing is left behind by a deletion.
func (r *Reconciler) ensureFinalizer(ctx context.Context, f *v1alpha1.ForeignClusterConnection) error {
	if hasFinalizer(f) {
		return nil
	}
	f2 := f.DeepCopy()
	f2.Finalizers = append(f2.Finalizers, v1alpha1.FCCFinalizer)
	out, err := r.Consumer.UpdateFCC(ctx, f2)
	if err != nil {
		return fmt.Errorf("adding the finalizer: %w", err)
	}
	f.ObjectMeta = out.ObjectMeta
	return nil
}

// errRelay marks a missing or unpublished Relay (already in the status).
var errRelay = errors.New("relay not ready")

// findRelay finds the one Relay in the provider's tenant namespace for
// this consumer and checks that it has published what the peer needs.
func (r *Reconciler) findRelay(ctx context.Context, p Provider, s *side, st *status) (*v1alpha1.Relay, error) {
	ns := s.fc.RemoteTenant
	list, err := p.Relays(ctx, ns)
	if err != nil {
		return nil, err
	}
	var live []v1alpha1.Relay
	for _, x := range list {
		if x.DeletionTimestamp == nil {
			live = append(live, x)
		}
	}
	switch len(live) {
	case 0:
		st.wait(v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayMissing,
			"no Relay in namespace %s of %s: deploy the relay beside Liqo's gateway for this consumer", ns, s.id)
		return nil, errRelay
	case 1:
	default:
		st.fail(v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayAmbiguous,
			"%d Relays in namespace %s of %s, want one", len(live), ns, s.id)
		return nil, errRelay
	}
	rl := &live[0]
	switch {
	case rl.Status.PublicKey == "":
		st.wait(v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayNotReady,
			"Relay %s/%s of %s has no status.publicKey yet: is the relay running?", ns, rl.Name, s.id)
		return nil, errRelay
	case rl.Status.ListenPort == 0:
		st.wait(v1alpha1.ConditionRelaysReady, v1alpha1.ReasonRelayNotReady,
			"Relay %s/%s of %s has no status.listenPort yet", ns, rl.Name, s.id)
		return nil, errRelay
	}
	return rl, nil
}

// overlay reads each relay's own addresses from its Relay's
// status.addresses: the relay's configuration owns them (they are set on
// its device at start), so the operator copies them into the other side's
// RelayPeer instead of allocating them (docs/operator.md, "Overlay
// addresses"). Two relays that publish overlapping addresses cannot peer:
// the FCC gets AddressConflict and nothing is written.
func (r *Reconciler) overlay(st *status, a, b *side) error {
	for _, s := range []*side{a, b} {
		s.overlay = s.overlay[:0]
		for i, v := range s.relay.Status.Addresses {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict,
					"Relay of %s: status.addresses[%d] %q: %v", s.id, i, v, err)
				return fmt.Errorf("the Relay of %s: status.addresses[%d]: %w", s.id, i, err)
			}
			s.overlay = append(s.overlay, p)
		}
	}
	for _, pa := range a.overlay {
		for _, pb := range b.overlay {
			if pa.Overlaps(pb) {
				st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict,
					"the relays of %s and %s both use overlay address %s (status.addresses); give one relay another address in its configuration", a.id, b.id, pa.Masked())
				return fmt.Errorf("overlay addresses of %s and %s overlap: %s, %s", a.id, b.id, pa, pb)
			}
		}
	}
	st.s.OverlayA, st.s.OverlayB = joinPrefixes(a.overlay), joinPrefixes(b.overlay)
	return nil
}

// joinPrefixes is the status form of a relay's addresses: their addresses,
// comma-separated.
func joinPrefixes(ps []netip.Prefix) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Addr().String()
	}
	return strings.Join(out, ",")
}
