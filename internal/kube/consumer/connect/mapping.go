package connect

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/liqo-relay/relay/api/v1alpha1"
	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
)

// mapping reads the remappings of both sides, makes sure each relay has
// its consumer-path IP and computes the per-pod mapping.
func (r *Reconciler) mapping(ctx context.Context, f *v1alpha1.ForeignClusterConnection, st *status, a, b *side) (podmap.Result, error) {
	for _, s := range []*side{a, b} {
		var err error
		if s.pods, err = r.Consumer.PodRemaps(ctx, s.fc); err == nil {
			s.external, err = s.prov.ExternalRemap(ctx, s.fc.RemoteTenant, r.ConsumerID)
		}
		if errors.Is(err, peering.ErrNotReady) {
			st.wait(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonLiqoNotReady, "%s: %v", s.id, err)
			return podmap.Result{}, errRequeue{waitPoll}
		}
		if err != nil {
			return podmap.Result{}, fmt.Errorf("%s: %w", s.id, err)
		}
	}
	if consumerPath(f) {
		for _, s := range []*side{a, b} {
			if err := r.relayEndpoint(ctx, st, s); err != nil {
				return podmap.Result{}, err
			}
		}
	}
	pods, err := r.Consumer.OffloadedPods(ctx)
	if err != nil {
		return podmap.Result{}, err
	}
	res, err := podmap.Compute(
		podmap.Provider{Name: a.id, External: a.external, Pods: a.pods},
		podmap.Provider{Name: b.id, External: b.external, Pods: b.pods}, pods)
	if err != nil {
		st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict, "%v", err)
		return podmap.Result{}, nil
	}
	conflicts := dedupe(&res.A)
	conflicts = append(conflicts, dedupe(&res.B)...)
	switch {
	case len(conflicts) > 0:
		st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict,
			"%d addresses claimed twice, left out: %s", len(conflicts), summarize(conflicts))
	case st.pending:
	case len(res.Skipped) > 0:
		st.ok(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonMapped,
			"%d pods mapped, %d waiting: %s", len(res.A.SeesUs)+len(res.B.SeesUs), len(res.Skipped), summarize(res.Skipped))
	default:
		st.ok(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonMapped,
			"%d pods mapped", len(res.A.SeesUs)+len(res.B.SeesUs))
	}
	return res, nil
}

func consumerPath(f *v1alpha1.ForeignClusterConnection) bool {
	return f.Spec.Paths.Consumer == nil || *f.Spec.Paths.Consumer
}

// DefaultConsumerBias is the consumer path's bias when the
// ForeignClusterConnection leaves it empty (the CRD's default; objects
// written without the API server's defaulting, as in tests, get it too).
const DefaultConsumerBias v1alpha1.Duration = "5ms"

func consumerBias(f *v1alpha1.ForeignClusterConnection) v1alpha1.Duration {
	if f.Spec.Paths.ConsumerBias == "" {
		return DefaultConsumerBias
	}
	return f.Spec.Paths.ConsumerBias
}

func directPath(f *v1alpha1.ForeignClusterConnection) bool {
	return f.Spec.Paths.Direct == nil || *f.Spec.Paths.Direct
}

// relayEndpoint makes sure the consumer has one IP for s's relay, whose
// spec.ip is the relay's pod (Liqo's gateway pod) as the consumer sees it,
// and reads its status.ip. spec.ip is immutable: when the pod's address
// changes (a gateway restart, an HA switch) the old IP is deleted and a new
// one created.
func (r *Reconciler) relayEndpoint(ctx context.Context, st *status, s *side) error {
	gw, err := s.prov.GatewayIP(ctx, s.fc.RemoteTenant, r.ConsumerID)
	if errors.Is(err, peering.ErrNotReady) {
		st.wait(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonLiqoNotReady, "%s: %v", s.id, err)
		st.pending = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: gateway: %w", s.id, err)
	}
	seen, ok := netip.Addr{}, false
	for _, rm := range s.pods {
		if seen, ok = rm.Map(gw); ok {
			break
		}
	}
	if !ok {
		st.fail(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressConflict,
			"%s: gateway pod IP %s is in none of the provider's pod CIDRs %v", s.id, gw, s.pods)
		st.pending = true
		return nil
	}
	want := RelayIPName(s.id, seen)
	ips, err := r.Consumer.RelayIPs(ctx, s.id)
	if err != nil {
		return err
	}
	var found *RelayIP
	for i, ip := range ips {
		switch {
		case ip.Name == want:
			found = &ips[i]
		case !ip.Deleting:
			if err := r.Consumer.DeleteRelayIP(ctx, ip.Name); err != nil {
				return fmt.Errorf("deleting stale IP %s: %w", ip.Name, err)
			}
		}
	}
	switch {
	case found == nil:
		if err := r.Consumer.CreateRelayIP(ctx, RelayIP{Name: want, Provider: s.id, Spec: seen}); err != nil {
			return fmt.Errorf("creating IP %s: %w", want, err)
		}
	case found.Deleting:
	case found.Status.IsValid():
		s.endpoint = found.Status
		return nil
	}
	st.wait(v1alpha1.ConditionAddressesMapped, v1alpha1.ReasonAddressPending,
		"waiting for Liqo's IPAM to give IP %s (the consumer path to %s's relay) a status.ip", want, s.id)
	st.pending = true
	return nil
}

// dedupe drops every address claimed more than once from a side (two pods
// with the same external address, or a pod on an overlay address): the
// relay would refuse the whole RelayPeer, and guessing the owner would
// misroute. It returns what it dropped.
func dedupe(s *podmap.Side) []string {
	count := make(map[netip.Prefix]int, len(s.Prefixes))
	for _, p := range s.Prefixes {
		count[p]++
	}
	real, as := make(map[netip.Prefix]int, len(s.SeesUs)), make(map[netip.Prefix]int, len(s.SeesUs))
	for _, m := range s.SeesUs {
		real[m.Real]++
		as[m.As]++
	}
	var out []string
	prefixes := s.Prefixes[:0]
	for _, p := range s.Prefixes {
		if count[p] > 1 {
			out = append(out, p.String())
			continue
		}
		prefixes = append(prefixes, p)
	}
	s.Prefixes = prefixes
	seesUs := s.SeesUs[:0]
	for _, m := range s.SeesUs {
		if real[m.Real] > 1 || as[m.As] > 1 {
			out = append(out, m.Real.String()+"->"+m.As.String())
			continue
		}
		seesUs = append(seesUs, m)
	}
	s.SeesUs = seesUs
	return out
}

// summarize keeps condition messages short.
func summarize(items []string) string {
	const show = 5
	if len(items) <= show {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:show], "; ") + fmt.Sprintf("; and %d more", len(items)-show)
}
