package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

// TestCardinalityMatchesModel drives random updates and removals, seeded,
// and checks that the number of per-path and per-peer series always equals
// what a naive model of "touched and not deleted since" predicts: series
// never outlive their peer or path.
func TestCardinalityMatchesModel(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			m := metrics.New()
			peers := []string{"a", "b", "c", "d"}
			paths := []string{"direct", "consumer", "backup"}
			livePaths := map[[2]string]bool{}
			livePeers := map[string]bool{}

			for step := range 150 {
				peer := peers[rng.IntN(len(peers))]
				path := paths[rng.IntN(len(paths))]
				switch op := rng.IntN(10); {
				case op < 6:
					m.PathUp(peer, path, rng.IntN(2) == 0)
					m.ObserveRTT(peer, path, time.Duration(rng.IntN(1e9)))
					m.PathStats(peer, path, rng.Float64(), rng.Uint64N(1e6))
					m.ProbeSent(peer, path)
					m.PeerReachable(peer, true)
					m.PeerBytes(peer, rng.Uint64N(1e9), rng.Uint64N(1e9))
					livePaths[[2]string{peer, path}] = true
					livePeers[peer] = true
				case op < 8:
					m.RemovePath(peer, path)
					delete(livePaths, [2]string{peer, path})
				default:
					m.RemovePeer(peer)
					delete(livePeers, peer)
					for k := range livePaths {
						if k[0] == peer {
							delete(livePaths, k)
						}
					}
				}
				series := seriesByName(t, m)
				for _, name := range []string{"relay_path_up", "relay_path_rtt_seconds", "relay_probes_sent_total", "relay_probes_lost_total"} {
					if got := series[name]; got != len(livePaths) {
						t.Fatalf("step %d: %s has %d series, model has %d paths", step, name, got, len(livePaths))
					}
				}
				if got := series["relay_peer_reachable"]; got != len(livePeers) {
					t.Fatalf("step %d: relay_peer_reachable has %d series, model has %d peers", step, got, len(livePeers))
				}
				if got := series["relay_peer_bytes_total"]; got != 2*len(livePeers) {
					t.Fatalf("step %d: relay_peer_bytes_total has %d series, want %d", step, got, 2*len(livePeers))
				}
			}
		})
	}
}

// seriesByName gathers once and counts the series of every family.
func seriesByName(t *testing.T, m *metrics.Metrics) map[string]int {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int, len(fams))
	for _, f := range fams {
		out[f.GetName()] = len(f.GetMetric())
	}
	return out
}
