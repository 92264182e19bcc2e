package health

import (
	"math/rand/v2"
	"testing"
)

func TestReplayFilterSteps(t *testing.T) {
	type step struct {
		epoch, nonce uint64
		want         bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"fresh then replay", []step{{1, 10, true}, {1, 10, false}}},
		{"in order", []step{{1, 1, true}, {1, 2, true}, {1, 3, true}, {1, 2, false}}},
		{"reordered inside window", []step{{1, 100, true}, {1, 50, true}, {1, 50, false}, {1, 99, true}}},
		{"too old", []step{{1, 5000, true}, {1, 5000 - replayWindow, false}, {1, 5000 - replayWindow + 1, true}}},
		{"big jump clears", []step{{1, 1, true}, {1, 1 << 40, true}, {1, 1<<40 - 1, true}, {1, 1, false}}},
		{"new epoch resets", []step{{1, 10, true}, {2, 10, true}, {2, 10, false}, {2, 3, true}}},
		{"old epoch refused", []step{{1, 10, true}, {2, 1, true}, {1, 11, false}, {2, 2, true}}},
		{"retired ring forgets the ninth", []step{
			{1, 1, true}, {2, 1, true}, {3, 1, true}, {4, 1, true}, {5, 1, true},
			{6, 1, true}, {7, 1, true}, {8, 1, true}, {9, 1, true}, {10, 1, true},
			{2, 1, false}, // 8 retired: 2..9; epoch 1 has dropped out
			{1, 1, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f ReplayFilter
			for i, s := range tt.steps {
				if got := f.Accept(s.epoch, s.nonce); got != s.want {
					t.Fatalf("step %d Accept(%d, %d) = %v, want %v", i, s.epoch, s.nonce, got, s.want)
				}
			}
		})
	}
}

// naiveFilter is the reference: a set of every nonce seen, and the newest.
type naiveFilter struct {
	seen   map[uint64]bool
	newest uint64
}

func (n *naiveFilter) accept(nonce uint64) bool {
	if len(n.seen) > 0 && nonce+replayWindow <= n.newest {
		return false
	}
	if n.seen[nonce] {
		return false
	}
	n.seen[nonce] = true
	n.newest = max(n.newest, nonce)
	return true
}

func TestReplayFilterAgainstNaive(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		var f ReplayFilter
		ref := naiveFilter{seen: map[uint64]bool{}}
		base := uint64(1000)
		for i := range 20000 {
			var n uint64
			switch r.IntN(10) {
			case 0: // jump ahead
				base += uint64(r.IntN(3 * replayWindow))
				n = base
			case 1, 2: // replay something recent or old
				n = base - uint64(r.IntN(min(int(base), 3*replayWindow)))
			default: // slightly reordered new nonces
				base += uint64(r.IntN(3))
				n = base - uint64(r.IntN(40))
			}
			if got, want := f.Accept(1, n), ref.accept(n); got != want {
				t.Fatalf("seed %d step %d nonce %d: got %v, want %v", seed, i, n, got, want)
			}
		}
	}
}
