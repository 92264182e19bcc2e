package dnsserver

import (
	"cmp"
	"net/netip"
	"slices"
	"time"
)

// View is what the responder knows at one moment. Build a new one for
// every change; a published View is never modified.
type View struct {
	// Self is this relay's cluster: its overlay addresses, and the
	// prefixes its pods are in (exports).
	Self Cluster
	// Peers are the peer relays' clusters.
	Peers []Cluster
	// Services maps "<service>.<namespace>" to the Service's endpoint
	// addresses, as this cluster's pods dial them (Kubernetes mode).
	Services map[string][]netip.Addr
}

// Cluster is one relay's cluster as the responder sees it.
type Cluster struct {
	Name string
	// Overlay are the relay's own overlay addresses.
	Overlay []netip.Addr
	// Routes are the prefixes a pod here reaches through this cluster's
	// relay (a peer's prefixes; our exports for Self). An endpoint
	// belongs to the cluster whose route holds it (longest match).
	Routes []netip.Prefix
	// Healthy: a peer with a working path (always true for Self).
	Healthy bool
	// Cost is the measured cost of the active path (smoothed RTT plus
	// bias); zero for Self.
	Cost time.Duration
}

// PeerAddrs returns the overlay addresses answered for <name>.<zone>, and
// whether the name is known at all. An unreachable peer is known but has
// no addresses: its name exists, with nothing healthy behind it.
func (v *View) PeerAddrs(name string) ([]netip.Addr, bool) {
	if v.Self.Name == name {
		return v.Self.Overlay, true
	}
	for _, p := range v.Peers {
		if p.Name == name {
			if !p.Healthy {
				return nil, true
			}
			return p.Overlay, true
		}
	}
	return nil, false
}

// ServiceAddrs returns the endpoints answered for <key>.<zone> (key is
// "<service>.<namespace>"), and whether the Service is known. Each
// endpoint goes to the cluster whose routes hold it (the longest prefix);
// an endpoint no cluster routes is not one a pod here can reach through
// the federation and is left out, as are the endpoints of unhealthy
// clusters. The local cluster's come first when it has any, then each
// healthy peer's, cheapest path first (ties by name); within a cluster the
// Service's order is kept.
func (v *View) ServiceAddrs(key string) ([]netip.Addr, bool) {
	eps, ok := v.Services[key]
	if !ok {
		return nil, false
	}
	clusters := make([]*Cluster, 0, len(v.Peers)+1)
	clusters = append(clusters, &v.Self)
	for i := range v.Peers {
		clusters = append(clusters, &v.Peers[i])
	}
	byCluster := make([][]netip.Addr, len(clusters))
	for _, a := range eps {
		if i := owner(clusters, a); i >= 0 {
			byCluster[i] = append(byCluster[i], a)
		}
	}
	order := make([]int, 0, len(clusters))
	for i := 1; i < len(clusters); i++ {
		if clusters[i].Healthy && len(byCluster[i]) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(clusters[x].Cost, clusters[y].Cost), cmp.Compare(clusters[x].Name, clusters[y].Name))
	})
	out := slices.Clone(byCluster[0])
	for _, i := range order {
		out = append(out, byCluster[i]...)
	}
	return out, true
}

// owner returns the index of the cluster whose longest route holds a, or
// -1.
func owner(clusters []*Cluster, a netip.Addr) int {
	best, bits := -1, -1
	for i, c := range clusters {
		for _, p := range c.Routes {
			if p.Contains(a) && p.Bits() > bits {
				best, bits = i, p.Bits()
			}
		}
	}
	return best
}
