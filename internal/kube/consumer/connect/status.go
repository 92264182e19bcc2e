package connect

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// status collects what one Sync found, for the FCC's status.
type status struct {
	gen int64
	old v1alpha1.ForeignClusterConnectionStatus
	s   v1alpha1.ForeignClusterConnectionStatus
	now time.Time
	// failed: a problem only the user can fix; pending: waiting on
	// another component; providerDown: an API server did not answer.
	failed, pending, providerDown bool
	written                       [2]bool
	reach                         [2]bool
}

func newStatus(f *v1alpha1.ForeignClusterConnection, now time.Time) *status {
	st := &status{gen: f.Generation, old: *f.Status.DeepCopy(), s: *f.Status.DeepCopy(), now: now}
	st.s.ObservedGeneration = f.Generation
	return st
}

func (st *status) set(typ string, s metav1.ConditionStatus, reason, format string, args ...any) {
	meta.SetStatusCondition(&st.s.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: fmt.Sprintf(format, args...),
		ObservedGeneration: st.gen, LastTransitionTime: metav1.NewTime(st.now),
	})
}

func (st *status) ok(typ, reason, format string, args ...any) {
	st.set(typ, metav1.ConditionTrue, reason, format, args...)
}

func (st *status) wait(typ, reason, format string, args ...any) {
	st.pending = true
	st.set(typ, metav1.ConditionFalse, reason, format, args...)
}

func (st *status) fail(typ, reason, format string, args ...any) {
	st.failed = true
	st.set(typ, metav1.ConditionFalse, reason, format, args...)
}

// unreachable records errors talking to providers. A refusal by RBAC is
// told apart: the fix is a RoleBinding, not the network.
func (st *status) unreachable(problems []error) {
	st.providerDown = true
	msgs := make([]string, len(problems))
	forbidden := false
	for i, e := range problems {
		msgs[i] = e.Error()
		forbidden = forbidden || apierrors.IsForbidden(e) || apierrors.IsUnauthorized(e)
	}
	if forbidden {
		st.set(v1alpha1.ConditionProvidersReachable, metav1.ConditionFalse, v1alpha1.ReasonProviderForbidden,
			"%s: bind manifests/rbac/operator-provider-role.yaml in the provider's tenant namespace to the operator's identity there (docs/operator.md, RBAC)", summarize(msgs))
		return
	}
	st.set(v1alpha1.ConditionProvidersReachable, metav1.ConditionFalse, v1alpha1.ReasonProviderUnreachable,
		"%s: check the provider's API server and the kubeconfig Secret (Liqo's, or spec.kubeconfigA/B)", summarize(msgs))
}

// hadCondition reports whether the status before this Sync had condition
// typ False with reason.
func (st *status) hadCondition(typ, reason string) bool {
	c := meta.FindStatusCondition(st.old.Conditions, typ)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason
}

// unreachableSince is when the providers became unreachable, by the
// status before this Sync; zero when they were reachable.
func (st *status) unreachableSince() time.Time {
	c := meta.FindStatusCondition(st.old.Conditions, v1alpha1.ConditionProvidersReachable)
	if c == nil || c.Status != metav1.ConditionFalse {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// directions copies each direction's state from the RelayPeer in the
// sending provider.
func (st *status) directions(a, b *side, res podmap.Result) {
	for i, x := range []*side{a, b} {
		d := v1alpha1.DirectionStatus{}
		if i == 0 {
			d.Endpoints = int32(len(res.A.Prefixes))
		} else {
			d.Endpoints = int32(len(res.B.Prefixes))
		}
		if x.peer != nil {
			d.ActivePath, d.Reachable, d.RTT = x.peer.Status.ActivePath, x.peer.Status.Reachable, x.peer.Status.RTT
		}
		st.written[i], st.reach[i] = x.written, d.Reachable
		if i == 0 {
			st.s.AToB = d
		} else {
			st.s.BToA = d
		}
	}
}

// phase decides the FCC's phase and its Ready condition.
func (st *status) phase() {
	was := st.old.Phase
	wasUp := was == v1alpha1.PhaseConnected || was == v1alpha1.PhaseDegraded
	var p v1alpha1.ConnectionPhase
	reason, msg := "", ""
	switch {
	case st.failed:
		p = v1alpha1.PhaseFailed
	case st.providerDown && wasUp:
		p = v1alpha1.PhaseDegraded
	case st.providerDown, !st.written[0] && !st.written[1]:
		p = v1alpha1.PhasePending
	case st.reach[0] && st.reach[1]:
		p, reason, msg = v1alpha1.PhaseConnected, v1alpha1.ReasonConnected, "both relays reach each other"
	case st.reach[0] || st.reach[1]:
		p, reason, msg = v1alpha1.PhaseDegraded, v1alpha1.ReasonOneWay, "one direction is down: see status.aToB and status.bToA and the RelayPeers' paths"
	case wasUp:
		p, reason, msg = v1alpha1.PhaseDegraded, v1alpha1.ReasonBothDown, "neither relay reaches the other on any path: see the RelayPeers' status.paths"
	default:
		p, reason, msg = v1alpha1.PhaseProvisioning, v1alpha1.ReasonWaiting, "RelayPeers written: waiting for the relays to reach each other"
	}
	if reason == "" {
		reason, msg = st.firstProblem()
	}
	s := metav1.ConditionFalse
	if p == v1alpha1.PhaseConnected {
		s = metav1.ConditionTrue
	}
	st.set(v1alpha1.ConditionReady, s, reason, "%s", msg)
	if p != was {
		st.s.LastTransition = &metav1.Time{Time: st.now}
	}
	st.s.Phase = p
}

var conditionOrder = []string{
	v1alpha1.ConditionClustersKnown, v1alpha1.ConditionProvidersReachable,
	v1alpha1.ConditionRelaysReady, v1alpha1.ConditionAddressesMapped,
}

func (st *status) firstProblem() (string, string) {
	for _, t := range conditionOrder {
		if c := meta.FindStatusCondition(st.s.Conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			return c.Reason, c.Message
		}
	}
	return v1alpha1.ReasonWaiting, "waiting"
}

// writeStatus writes the status when it changed, and records an event on
// a phase change.
func (r *Reconciler) writeStatus(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status) error {
	st.phase()
	if equality.Semantic.DeepEqual(st.old, st.s) {
		return nil
	}
	f.Status = st.s
	if err := r.Consumer.UpdateFCCStatus(ctx, f); err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	if st.old.Phase != st.s.Phase {
		typ := "Normal"
		if st.s.Phase == v1alpha1.PhaseFailed || st.s.Phase == v1alpha1.PhaseDegraded {
			typ = "Warning"
		}
		c := meta.FindStatusCondition(st.s.Conditions, v1alpha1.ConditionReady)
		r.event(f, typ, string(st.s.Phase), "%s -> %s: %s", orNone(st.old.Phase), st.s.Phase, c.Message)
		r.log().Info("phase", "fcc", f.Name, "from", st.old.Phase, "to", st.s.Phase, "reason", c.Reason)
	}
	return nil
}

func orNone(p v1alpha1.ConnectionPhase) string {
	if p == "" {
		return "(none)"
	}
	return strings.ToLower(string(p))
}
