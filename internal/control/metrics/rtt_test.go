package metrics_test

import (
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

// An RTTObserver records into the same series as ObserveRTT; after
// RemovePath the path's series is gone. The zero value and one from nil
// Metrics record nothing and do not panic.
func TestRTTObserverFor(t *testing.T) {
	m := metrics.New()
	o := m.RTTObserverFor("b", "direct")
	o.Observe(2 * time.Millisecond)
	m.ObserveRTT("b", "direct", 3*time.Millisecond)
	if got := sampleCount(t, m); got != 2 {
		t.Fatalf("%d RTT samples, want 2", got)
	}
	m.RemovePath("b", "direct")
	if n := count(t, m, "relay_path_rtt_seconds"); n != 0 {
		t.Fatalf("%d series after RemovePath", n)
	}
	var nilM *metrics.Metrics
	nilM.RTTObserverFor("b", "direct").Observe(time.Millisecond)
	metrics.RTTObserver{}.Observe(time.Millisecond)
}

func sampleCount(t *testing.T, m *metrics.Metrics) uint64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "relay_path_rtt_seconds" {
			var n uint64
			for _, s := range mf.GetMetric() {
				n += s.GetHistogram().GetSampleCount()
			}
			return n
		}
	}
	return 0
}
