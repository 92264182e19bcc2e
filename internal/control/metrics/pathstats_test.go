package metrics_test

import (
	"math"
	"testing"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

// A PathStatsSeries sets the same series as PathStats and RTTOutliers,
// with the same clamping and reset handling. After RemovePeer or
// RemovePath its series are gone, and setting through the old handle does
// not bring them back; a new PathStatsFor does. The zero value and one
// from nil Metrics record nothing and do not panic.
func TestPathStatsFor(t *testing.T) {
	const families = `
# HELP relay_path_loss_ratio Estimated probe loss on the path, 0 to 1.
# TYPE relay_path_loss_ratio gauge
relay_path_loss_ratio{path="consumer",peer="b"} 0.5
relay_path_loss_ratio{path="direct",peer="b"} 1
# HELP relay_probes_lost_total Probes on the path that got no answer in time.
# TYPE relay_probes_lost_total counter
relay_probes_lost_total{path="consumer",peer="b"} 4
relay_probes_lost_total{path="direct",peer="b"} 7
`
	names := []string{"relay_path_loss_ratio", "relay_probes_lost_total"}
	m := metrics.New()
	direct, consumer := m.PathStatsFor("b", "direct"), m.PathStatsFor("b", "consumer")
	direct.Set(math.NaN(), 0, 0)
	direct.Set(3, 5, 1) // loss clamped to 1
	direct.Set(3, 2, 2) // a lower total is a reset: 5 + 2
	m.PathStats("b", "consumer", 0.5, 4)
	consumer.Set(0.5, 4, 0) // the same series as PathStats
	gatherCompare(t, m, families, names...)
	if n := count(t, m, "relay_probe_rtt_outliers_total"); n != 2 {
		t.Fatalf("%d outlier series, want 2", n)
	}

	m.RemovePath("b", "consumer")
	consumer.Set(0.5, 9, 9)
	for _, name := range append(names, "relay_probe_rtt_outliers_total") {
		if n := count(t, m, name); n != 1 {
			t.Errorf("%s: %d series after RemovePath and a stale Set, want only direct's", name, n)
		}
	}
	m.RemovePeer("b")
	direct.Set(0, 8, 3)
	for _, name := range append(names, "relay_probe_rtt_outliers_total") {
		if n := count(t, m, name); n != 0 {
			t.Errorf("%s: %d series after RemovePeer and a stale Set, want none", name, n)
		}
	}
	m.PathStatsFor("b", "direct").Set(0, 1, 0)
	gatherCompare(t, m, `
# HELP relay_probes_lost_total Probes on the path that got no answer in time.
# TYPE relay_probes_lost_total counter
relay_probes_lost_total{path="direct",peer="b"} 1
`, "relay_probes_lost_total")

	var nilM *metrics.Metrics
	nilM.PathStatsFor("b", "direct").Set(1, 1, 1)
	metrics.PathStatsSeries{}.Set(1, 1, 1)
}
