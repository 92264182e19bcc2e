package failover

import (
	"fmt"
	"testing"
	"time"
)

func benchSelector(peers int) (*Selector, []string) {
	s := New(DefaultSettings())
	names := make([]string, peers)
	for i := range peers {
		names[i] = fmt.Sprintf("peer-%04d", i)
		s.SetPeer(names[i], []PathSpec{{Name: "direct"}, {Name: "consumer", Bias: 2 * time.Millisecond}, {Name: "backup"}}, DefaultSettings())
		s.Observe(names[i], "direct", Observation{Up: true, SRTT: 10 * time.Millisecond}, t0)
		s.Observe(names[i], "consumer", Observation{Up: true, SRTT: 12 * time.Millisecond, Loss: 0.01}, t0)
		s.Observe(names[i], "backup", Observation{Up: true, SRTT: 40 * time.Millisecond}, t0)
	}
	s.Tick(t0)
	return s, names
}

// BenchmarkTick measures one selection round with every path up and no
// switch to make: the steady state the shell pays on every Tick.
func BenchmarkTick(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(fmt.Sprintf("peers=%d", n), func(b *testing.B) {
			s, _ := benchSelector(n)
			now := t0
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(10 * time.Millisecond)
				if evs := s.Tick(now); evs != nil {
					b.Fatalf("unexpected events %v", evs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/peer")
		})
	}
}

// BenchmarkObserveTick: one observation (a probe answer) followed by a
// selection round over 1000 peers, as the agent does per reply batch.
func BenchmarkObserveTick(b *testing.B) {
	s, names := benchSelector(1000)
	now := t0
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		now = now.Add(time.Millisecond)
		s.Observe(names[i%len(names)], "consumer", Observation{Up: true, SRTT: 12 * time.Millisecond}, now)
		s.Tick(now)
		i++
	}
}

func TestTickSteadyStateZeroAlloc(t *testing.T) {
	s, names := benchSelector(50)
	now := t0
	if n := testing.AllocsPerRun(100, func() {
		now = now.Add(10 * time.Millisecond)
		s.Observe(names[3], "backup", Observation{Up: true, SRTT: 41 * time.Millisecond}, now)
		s.Tick(now)
	}); n != 0 {
		t.Fatalf("allocs per Observe+Tick without events = %v, want 0", n)
	}
}
