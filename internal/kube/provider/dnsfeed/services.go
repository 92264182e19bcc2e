// Package dnsfeed turns the EndpointSlices of a provider cluster into the
// Services the relay's DNS responder answers for (docs/dns.md, "Kubernetes
// mode: Services"): the Services that the relay's own consumer offloaded
// here, with every ready endpoint, as this cluster's pods dial them.
// Services is the pure selection; Run watches the EndpointSlices of every
// namespace and feeds its result to the DNS responder.
package dnsfeed

import (
	"cmp"
	"net/netip"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
)

// Labels Liqo v1.2.0 puts on reflected EndpointSlices.
const (
	// managedByLabel is discoveryv1.LabelManagedBy; reflectionManager is
	// its value on EndpointSlices reflected from a consumer
	// (forge.EndpointSliceLabels, pkg/virtualKubelet/forge/endpointslices.go).
	reflectionManager = "endpointslice.reflection.liqo.io"
	// originLabel names the consumer a reflected object came from
	// (forge.LiqoOriginClusterIDKey, pkg/virtualKubelet/forge/meta.go).
	originLabel = "offloading.liqo.io/origin"
)

// Services returns "<service>.<namespace>" to the endpoint addresses of
// every Service that consumer offloaded here: a Service counts when one of
// its EndpointSlices (by kubernetes.io/service-name) was reflected from
// consumer. Its addresses come from all its slices, reflected and native
// (the pods offloaded to this cluster itself are not reflected: they are
// in the native slices), every endpoint not marked not-ready, each address
// once, in slice-name then endpoint order. Slices of other consumers'
// Services are ignored; so are slices without a service name.
func Services(in []discoveryv1.EndpointSlice, consumer string) map[string][]netip.Addr {
	type key struct{ ns, svc string }
	byService := map[key][]*discoveryv1.EndpointSlice{}
	counts := map[key]bool{}
	for i := range in {
		s := &in[i]
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		k := key{s.Namespace, svc}
		byService[k] = append(byService[k], s)
		if s.Labels[discoveryv1.LabelManagedBy] == reflectionManager && s.Labels[originLabel] == consumer {
			counts[k] = true
		}
	}
	out := map[string][]netip.Addr{}
	for k := range counts {
		ss := byService[k]
		slices.SortFunc(ss, func(x, y *discoveryv1.EndpointSlice) int { return cmp.Compare(x.Name, y.Name) })
		var addrs []netip.Addr
		for _, s := range ss {
			for _, ep := range s.Endpoints {
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				for _, a := range ep.Addresses {
					ip, err := netip.ParseAddr(a)
					if err != nil || slices.Contains(addrs, ip.Unmap()) {
						continue
					}
					addrs = append(addrs, ip.Unmap())
				}
			}
		}
		out[k.svc+"."+k.ns] = addrs
	}
	return out
}
