package agent

import (
	"math"
	"testing"

	"github.com/liqo-relay/relay/internal/core/health"
)

// TestPathStatsExportedOnlyWhenMoved: a path's loss and lost count are
// exported the first time (also with no loss estimate yet), then only when
// one of them changed.
func TestPathStatsExportedOnlyWhenMoved(t *testing.T) {
	var ps pathState
	steps := []struct {
		loss float64
		lost uint64
		want bool
	}{
		{math.NaN(), 0, true}, // first: exported, even without an estimate
		{math.NaN(), 0, false},
		{0, 0, true},
		{0, 0, false},
		{0, 0, false},
		{0.25, 1, true},
		{0.25, 2, true},
		{0.25, 2, false},
		{0, 2, true},
	}
	for i, s := range steps {
		if got := ps.statsMoved(health.PathStats{Loss: s.loss, ProbesLost: s.lost}); got != s.want {
			t.Errorf("step %d (loss %v, lost %d): moved %v, want %v", i, s.loss, s.lost, got, s.want)
		}
	}
	// A clipped RTT outlier moves the stats too (relay_probe_rtt_outliers_total).
	if !ps.statsMoved(health.PathStats{Loss: 0, ProbesLost: 2, RTTOutliers: 1}) {
		t.Error("a new RTT outlier was not exported")
	}
	var fresh pathState // a new path state: exported even at loss 0
	if !fresh.statsMoved(health.PathStats{}) {
		t.Error("a new path's zero stats were not exported")
	}
}
