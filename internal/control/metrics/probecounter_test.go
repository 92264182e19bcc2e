package metrics_test

import (
	"testing"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

// A ProbeCounter counts into the same series as ProbeSent; after
// RemovePath the path's series is gone until it is looked up again. The
// zero value and one from nil Metrics count nothing and do not panic.
func TestProbeCounterFor(t *testing.T) {
	m := metrics.New()
	c := m.ProbeCounterFor("b", "direct")
	for range 3 {
		c.Inc()
	}
	m.ProbeSent("b", "direct")
	gatherCompare(t, m, `
# HELP relay_probes_sent_total Probes sent on the path.
# TYPE relay_probes_sent_total counter
relay_probes_sent_total{path="direct",peer="b"} 4
`, "relay_probes_sent_total")
	m.RemovePath("b", "direct")
	if n := count(t, m, "relay_probes_sent_total"); n != 0 {
		t.Fatalf("%d series after RemovePath", n)
	}
	var nilM *metrics.Metrics
	nilM.ProbeCounterFor("b", "direct").Inc()
	metrics.ProbeCounter{}.Inc()
}
