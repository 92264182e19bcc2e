package linkem

import (
	"testing"
	"time"
)

func TestLineAdmit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name    string
		cfg     Config
		arrive  []time.Duration // offsets from t0, non-decreasing
		wantDue []time.Duration // offsets from t0; -1 = dropped
	}{
		{"plain delay", Config{Delay: 10 * time.Millisecond}, []time.Duration{0, 1, 5}, []time.Duration{10 * time.Millisecond, 10*time.Millisecond + 1, 10*time.Millisecond + 5}},
		{"no delay", Config{}, []time.Duration{0, 3}, []time.Duration{0, 3}},
		{"total loss", Config{Delay: time.Millisecond, Loss: 1}, []time.Duration{0, 1}, []time.Duration{-1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln := newLine(1, 1)
			for i, off := range tt.arrive {
				due, ok := ln.admit(tt.cfg, t0.Add(off))
				if tt.wantDue[i] < 0 {
					if ok {
						t.Fatalf("packet %d admitted, want dropped", i)
					}
					continue
				}
				if !ok || !due.Equal(t0.Add(tt.wantDue[i])) {
					t.Fatalf("packet %d: due %v ok %v, want %v", i, due.Sub(t0), ok, tt.wantDue[i])
				}
			}
		})
	}
}

// TestLineJitterKeepsOrder: with jitter as large as the delay, due times
// still never decrease, so the delay line never reorders.
func TestLineJitterKeepsOrder(t *testing.T) {
	ln := newLine(7, 1)
	cfg := Config{Delay: 10 * time.Millisecond, Jitter: 10 * time.Millisecond}
	now := time.Unix(0, 0)
	var last time.Time
	varied := false
	for i := range 10000 {
		now = now.Add(100 * time.Microsecond)
		due, ok := ln.admit(cfg, now)
		if !ok {
			t.Fatal("dropped with zero loss")
		}
		if due.Before(last) {
			t.Fatalf("packet %d due %v before previous %v", i, due, last)
		}
		if due.Before(now) || due.After(now.Add(20*time.Millisecond)) {
			t.Fatalf("packet %d due %v outside [now, now+delay+jitter]", i, due.Sub(now))
		}
		if d := due.Sub(now); d != cfg.Delay {
			varied = true
		}
		last = due
	}
	if !varied {
		t.Fatal("jitter never changed a delay")
	}
}

// TestLineLossRate: seeded loss is reproducible and near the configured rate.
func TestLineLossRate(t *testing.T) {
	const n, loss = 20000, 0.3
	count := func(seed int64) (lost int, pattern []bool) {
		ln := newLine(seed, 1)
		for range n {
			_, ok := ln.admit(Config{Loss: loss}, time.Unix(0, 0))
			pattern = append(pattern, ok)
			if !ok {
				lost++
			}
		}
		return lost, pattern
	}
	a, pa := count(42)
	b, pb := count(42)
	if a != b {
		t.Fatalf("same seed, different losses: %d vs %d", a, b)
	}
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("same seed, pattern differs at %d", i)
		}
	}
	// 5 standard deviations of a binomial(20000, 0.3) is about 324.
	if want := n * loss; float64(a) < want-324 || float64(a) > want+324 {
		t.Fatalf("lost %d of %d, want about %.0f", a, n, want)
	}
	if c, _ := count(43); c == a {
		t.Logf("seeds 42 and 43 lost the same count %d (possible, unlikely)", c)
	}
}

func TestQueueBounded(t *testing.T) {
	q := newQueue(3)
	for i := range 3 {
		if !q.push(item{pkt: []byte{byte(i)}}) {
			t.Fatalf("push %d refused", i)
		}
	}
	if q.push(item{}) {
		t.Fatal("push beyond capacity accepted")
	}
	for i := range 3 {
		if it := q.pop(); it.pkt[0] != byte(i) {
			t.Fatalf("pop %d got %d", i, it.pkt[0])
		}
		q.push(item{pkt: []byte{byte(i + 3)}})
	}
	for i := 3; i < 6; i++ {
		if it := q.pop(); it.pkt[0] != byte(i) {
			t.Fatalf("pop %d got %d", i, it.pkt[0])
		}
	}
	if _, ok := q.peek(); ok {
		t.Fatal("queue not empty")
	}
}
