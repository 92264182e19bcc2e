package health

import (
	"slices"
	"testing"
	"time"
)

func TestRotationWaitsForEveryPeerOrTheDeadline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const deadline = time.Minute
	type step struct {
		at      time.Duration // since t0
		peers   []string      // SetPeers, when non-nil
		staged  string        // Staged, when set
		news    bool          // what Staged returns
		switch_ bool
		reason  string
		waiting []string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"no peers switches at once", []step{
			{at: 0, peers: []string{}, switch_: true, reason: "all-staged"},
		}},
		{"all peers staged", []step{
			{at: 0, peers: []string{"b", "a"}, waiting: []string{"a", "b"}},
			{at: time.Second, staged: "a", news: true, waiting: []string{"b"}},
			{at: 2 * time.Second, staged: "a", news: false, waiting: []string{"b"}},
			{at: 3 * time.Second, staged: "b", news: true, switch_: true, reason: "all-staged"},
		}},
		{"a straggler holds the switch until the deadline", []step{
			{at: 0, peers: []string{"a", "b"}, waiting: []string{"a", "b"}},
			{at: time.Second, staged: "a", news: true, waiting: []string{"b"}},
			{at: deadline - time.Nanosecond, waiting: []string{"b"}},
			{at: deadline, switch_: true, reason: "deadline", waiting: []string{"b"}},
		}},
		{"a removed straggler is no longer waited for", []step{
			{at: 0, peers: []string{"a", "b"}, waiting: []string{"a", "b"}},
			{at: time.Second, staged: "a", news: true, waiting: []string{"b"}},
			{at: 2 * time.Second, peers: []string{"a"}, switch_: true, reason: "all-staged"},
		}},
		{"a new peer must stage too; kept peers keep their proof", []step{
			{at: 0, peers: []string{"a", "b"}, waiting: []string{"a", "b"}},
			{at: time.Second, staged: "a", news: true, waiting: []string{"b"}},
			{at: time.Second, peers: []string{"a", "b", "c"}, waiting: []string{"b", "c"}},
			{at: 2 * time.Second, staged: "b", news: true, waiting: []string{"c"}},
			{at: 2 * time.Second, staged: "c", news: true, switch_: true, reason: "all-staged"},
		}},
		{"proof from an unknown peer is ignored", []step{
			{at: 0, peers: []string{"a"}, waiting: []string{"a"}},
			{at: time.Second, staged: "x", news: false, waiting: []string{"a"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRotation(t0, deadline)
			if got := r.Deadline(); !got.Equal(t0.Add(deadline)) {
				t.Fatalf("Deadline %v, want %v", got, t0.Add(deadline))
			}
			for i, s := range tc.steps {
				if s.peers != nil {
					r.SetPeers(s.peers)
				}
				if s.staged != "" {
					if got := r.Staged(s.staged); got != s.news {
						t.Errorf("step %d: Staged(%q) = %v, want %v", i, s.staged, got, s.news)
					}
				}
				d := r.Decide(t0.Add(s.at))
				if d.Switch != s.switch_ || d.Reason != s.reason || !slices.Equal(d.Waiting, s.waiting) {
					t.Errorf("step %d: Decide = %+v, want switch %v reason %q waiting %v", i, d, s.switch_, s.reason, s.waiting)
				}
			}
		})
	}
}
