package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/liqo-relay/relay/pkg/metrics"
)

func BenchmarkAddPacketsDropped(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.AddPacketsDropped(metrics.DropBadDestination, 1)
	}
}

func BenchmarkObserveRTT(b *testing.B) {
	m := metrics.New()
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveRTT("provider-b", "direct", 10*time.Millisecond)
	}
}

// BenchmarkGather is one scrape of a relay with 20 peers x 3 paths.
func BenchmarkGather(b *testing.B) {
	m := metrics.New()
	for i := range 20 {
		peer := fmt.Sprintf("provider-%d", i)
		for _, p := range []string{"direct", "consumer", "backup"} {
			m.SetPathUp(peer, p, true)
			m.ObserveRTT(peer, p, time.Millisecond)
			m.ProbeSent(peer, p)
		}
		m.SetPeerBytes(peer, 1, 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Registry().Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
