package peersync

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/core/status"
)

// desiredStatus computes a RelayPeer's status from the sync verdict and the
// relay's view of the peer (nil when the relay does not run it). prev is the
// status last written, whose condition transition times are kept when a
// condition's status did not change. It is pure: now is an input.
func desiredStatus(prev v1alpha1.RelayPeerStatus, v verdict, ps *status.PeerStatus, now time.Time) v1alpha1.RelayPeerStatus {
	st := v1alpha1.RelayPeerStatus{
		ObservedGeneration: v.generation,
		Conditions:         append([]metav1.Condition(nil), prev.Conditions...),
		LastTransition:     prev.LastTransition,
	}
	t := metav1.NewTime(now)
	set := func(typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason,
			Message: msg, ObservedGeneration: v.generation, LastTransitionTime: t})
	}
	set(v1alpha1.ConditionReady, v.ready, v.reason, v.message)
	if ps == nil {
		set(v1alpha1.ConditionReachable, false, v1alpha1.ReasonNoPaths, "the relay does not run this peer: see the Ready condition")
		meta.RemoveStatusCondition(&st.Conditions, v1alpha1.ConditionDegraded)
		if prev.ActivePath != "" || prev.Reachable {
			st.LastTransition = &t
		}
		return st
	}
	st.ActivePath = ps.ActivePath
	st.Reachable = ps.Reachable
	if !ps.LastHandshake.IsZero() {
		lh := metav1.NewTime(ps.LastHandshake.Time)
		st.LastHandshake = &lh
	}
	firstUp, anyDown := "", ""
	for _, p := range ps.Paths {
		state := v1alpha1.PathState(p.State)
		switch p.State {
		case status.PathUp:
			if firstUp == "" {
				firstUp = p.Name
			}
		case status.PathDown:
			if anyDown == "" {
				anyDown = p.Name
			}
		case status.PathDampened:
		default:
			state = v1alpha1.PathUnknown
		}
		pst := v1alpha1.PathStatus{Name: p.Name, Address: p.Endpoint, State: state}
		if p.State == status.PathUp || p.State == status.PathDampened {
			pst.RTT = msDuration(p.RTTMs)
			pst.Jitter = msDuration(p.JitterMs)
			pst.Loss = percent(p.Loss)
		}
		if p.Name == ps.ActivePath {
			st.RTT = pst.RTT
		}
		st.Paths = append(st.Paths, pst)
	}
	if ps.Reachable {
		set(v1alpha1.ConditionReachable, true, v1alpha1.ReasonPathUp, fmt.Sprintf("traffic flows on path %s", ps.ActivePath))
	} else {
		set(v1alpha1.ConditionReachable, false, v1alpha1.ReasonAllPathsDown,
			"no path answers probes: routes are withdrawn and traffic takes Liqo's own path; check the endpoints and that UDP reaches the peer's listen port")
	}
	switch {
	case ps.ActivePath != "" && firstUp != "" && ps.ActivePath != firstUp:
		set(v1alpha1.ConditionDegraded, true, v1alpha1.ReasonNotPreferred,
			fmt.Sprintf("traffic is on %s, not on the preferred healthy path %s (hysteresis or failback hold)", ps.ActivePath, firstUp))
	case anyDown != "":
		set(v1alpha1.ConditionDegraded, true, v1alpha1.ReasonPathDown, fmt.Sprintf("path %s is down", anyDown))
	default:
		set(v1alpha1.ConditionDegraded, false, v1alpha1.ReasonPreferredActive, "traffic is on the preferred path and every path is up")
	}
	if prev.ActivePath != st.ActivePath || prev.Reachable != st.Reachable || st.LastTransition == nil {
		st.LastTransition = &t
	}
	return st
}

// transition reports whether next differs from prev in something a person
// or the operator acts on: anything but the measurements (RTT, jitter,
// loss) and the handshake time. Those are written at most every
// StatusRefresh.
func transition(prev, next v1alpha1.RelayPeerStatus) bool {
	if prev.ObservedGeneration != next.ObservedGeneration || prev.ActivePath != next.ActivePath ||
		prev.Reachable != next.Reachable || len(prev.Paths) != len(next.Paths) ||
		len(prev.Conditions) != len(next.Conditions) {
		return true
	}
	for i := range prev.Paths {
		a, b := prev.Paths[i], next.Paths[i]
		if a.Name != b.Name || a.State != b.State || a.Address != b.Address {
			return true
		}
	}
	for _, c := range next.Conditions {
		o := meta.FindStatusCondition(prev.Conditions, c.Type)
		if o == nil || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message ||
			o.ObservedGeneration != c.ObservedGeneration {
			return true
		}
	}
	return false
}

// measured reports whether the measurements differ.
func measured(prev, next v1alpha1.RelayPeerStatus) bool {
	if prev.RTT != next.RTT || !timeEqual(prev.LastHandshake, next.LastHandshake) {
		return true
	}
	for i := range prev.Paths {
		a, b := prev.Paths[i], next.Paths[i]
		if a.RTT != b.RTT || a.Jitter != b.Jitter || a.Loss != b.Loss {
			return true
		}
	}
	return false
}

func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// msDuration renders milliseconds as a duration string rounded to 10 µs,
// such as "10.52ms".
func msDuration(ms float64) string {
	return (time.Duration(ms * float64(time.Millisecond))).Round(10 * time.Microsecond).String()
}

// percent renders a 0..1 fraction as a percentage string such as "1.5%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}
