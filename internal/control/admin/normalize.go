package admin

import (
	"math"

	"github.com/liqo-relay/relay/internal/core/status"
)

// normalized returns a copy of s that always encodes: nil slices become
// empty (the JSON carries [] rather than null, so scripts can iterate
// without checks) and non-finite numbers, which JSON cannot carry (an
// estimator with no samples yet), become 0. The source's slices are not
// modified.
func normalized(s status.Status) status.Status {
	s.UptimeSeconds = finite(s.UptimeSeconds)
	s.Events = orEmpty(s.Events)
	peers := make([]status.PeerStatus, len(s.Peers))
	for i, p := range s.Peers {
		p.Prefixes = orEmpty(p.Prefixes)
		paths := make([]status.PathStatus, len(p.Paths))
		for j, ps := range p.Paths {
			ps.RTTMs = finite(ps.RTTMs)
			ps.JitterMs = finite(ps.JitterMs)
			ps.Loss = finite(ps.Loss)
			ps.Bias = finite(ps.Bias)
			ps.Penalty = finite(ps.Penalty)
			paths[j] = ps
		}
		p.Paths = paths
		peers[i] = p
	}
	s.Peers = peers
	return s
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
