package connect

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// finalize removes what the FCC wrote: its RelayPeer in each provider and
// the consumer-path IPs no other FCC uses. A provider that stays
// unreachable for GiveUp is given up on, with a Warning event naming the
// RelayPeer left behind; then the finalizer goes.
func (r *Reconciler) finalize(ctx context.Context, f *v1alpha1.ForeignClusterConnection) error {
	if !hasFinalizer(f) {
		return nil
	}
	st := newStatus(f, r.now())
	sides := [][2]string{{f.Spec.ClusterA, f.Spec.ClusterB}, {f.Spec.ClusterB, f.Spec.ClusterA}}
	overrides := []*v1alpha1.KubeconfigSecretRef{f.Spec.KubeconfigA, f.Spec.KubeconfigB}
	var left []error
	for i, s := range sides {
		x, y := s[0], s[1]
		name := PeerName(r.ConsumerID, y)
		fc, err := r.Consumer.ForeignCluster(ctx, x)
		if errors.Is(err, ErrUnknownCluster) {
			// The peering is gone, and Liqo's credentials with it: nothing
			// can reach that provider any more, so waiting is pointless.
			r.event(f, "Warning", "GaveUp", "%s is no longer a peer of this consumer: RelayPeer %s left behind there", x, name)
			continue
		}
		if err == nil {
			var p Provider
			if p, err = r.Dialer.Provider(ctx, fc, overrides[i]); err == nil {
				err = p.DeleteRelayPeer(ctx, fc.RemoteTenant, name)
			}
			if err == nil && r.Counters.Writes != nil {
				r.Counters.Writes("RelayPeerDelete")
			}
		}
		if err != nil {
			left = append(left, fmt.Errorf("RelayPeer %s in %s: %w", name, x, err))
		}
	}
	if len(left) > 0 {
		since := st.unreachableSince()
		st.unreachable(left)
		giveUp := r.GiveUp
		if giveUp == 0 {
			giveUp = DefaultGiveUp
		}
		if since.IsZero() || r.now().Sub(since) < giveUp {
			st.set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonDeleting,
				"deleting: retrying an unreachable provider for up to %v", giveUp)
			if err := r.writeDeleting(ctx, f, st); err != nil {
				return err
			}
			return errRequeue{waitPoll}
		}
		r.event(f, "Warning", "GaveUp", "provider unreachable for %v, left behind: %v", giveUp, errors.Join(left...))
		r.log().Warn("gave up on an unreachable provider", "fcc", f.Name, "left", left)
	}
	for _, id := range []string{f.Spec.ClusterA, f.Spec.ClusterB} {
		if r.providerInUse(f, id) {
			continue
		}
		ips, err := r.Consumer.RelayIPs(ctx, id)
		if err != nil {
			return err
		}
		for _, ip := range ips {
			if err := r.Consumer.DeleteRelayIP(ctx, ip.Name); err != nil {
				return fmt.Errorf("deleting IP %s: %w", ip.Name, err)
			}
		}
	}
	f2 := f.DeepCopy()
	f2.Finalizers = nil
	for _, x := range f.Finalizers {
		if x != v1alpha1.FCCFinalizer {
			f2.Finalizers = append(f2.Finalizers, x)
		}
	}
	if _, err := r.Consumer.UpdateFCC(ctx, f2); err != nil {
		return fmt.Errorf("removing the finalizer: %w", err)
	}
	r.log().Info("connection removed", "fcc", f.Name)
	return nil
}

// writeDeleting writes the status of a deleting FCC when it changed.
func (r *Reconciler) writeDeleting(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status) error {
	st.s.Phase = v1alpha1.PhaseDegraded
	if st.old.Phase != st.s.Phase {
		st.s.LastTransition = &metav1.Time{Time: st.now}
	}
	if equality.Semantic.DeepEqual(st.old, st.s) {
		return nil
	}
	f.Status = st.s
	return r.Consumer.UpdateFCCStatus(ctx, f)
}

// providerInUse reports whether an FCC other than f, not being deleted,
// connects provider id (and so needs its relay's consumer-path IP).
func (r *Reconciler) providerInUse(f *v1alpha1.ForeignClusterConnection, id string) bool {
	for _, o := range r.FCCs.List() {
		if o.Name != f.Name && o.DeletionTimestamp == nil && (o.Spec.ClusterA == id || o.Spec.ClusterB == id) {
			return true
		}
	}
	return false
}
