package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
)

func BenchmarkObserveRTT(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRTT("provider-b", "direct", 10*time.Millisecond)
	}
}

func BenchmarkProbeSent(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ProbeSent("provider-b", "direct")
	}
}

// BenchmarkHousekeeping is what the agent does every housekeeping tick for
// one peer with three paths.
func BenchmarkHousekeeping(b *testing.B) {
	m := metrics.New()
	var n uint64
	b.ReportAllocs()
	for b.Loop() {
		n++
		m.PeerBytes("provider-b", n*1000, n*900)
		for _, p := range []string{"direct", "consumer", "backup"} {
			m.PathStats("provider-b", p, 0.01, n)
		}
		m.Pipeline(metrics.PipelineCounters{DroppedBadSource: n, TranslatedRX: n, TranslatedTX: n})
	}
}

// BenchmarkGather is one scrape of a relay with 20 peers x 3 paths.
func BenchmarkGather(b *testing.B) {
	m := metrics.New()
	for i := range 20 {
		peer := fmt.Sprintf("provider-%d", i)
		for _, p := range []string{"direct", "consumer", "backup"} {
			m.PathUp(peer, p, true)
			m.ObserveRTT(peer, p, time.Millisecond)
			m.PathStats(peer, p, 0, 1)
			m.ProbeSent(peer, p)
		}
		m.PeerBytes(peer, 1, 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Registry().Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
