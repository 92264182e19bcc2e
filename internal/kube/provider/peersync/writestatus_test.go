package peersync

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

func jobs(names ...string) []statusJob {
	out := make([]statusJob, len(names))
	for i, n := range names {
		out[i] = statusJob{name: n, uid: "uid-" + n, st: v1alpha1.RelayPeerStatus{ObservedGeneration: 1}}
	}
	return out
}

func TestApplyStatusesByOutcome(t *testing.T) {
	ctx := context.Background()
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: v1alpha1.Group, Kind: "RelayPeer"}, "b",
		field.ErrorList{field.Invalid(field.NewPath("status", "rtt"), "x", "bad")})
	for _, tc := range []struct {
		name        string
		objs        []string // the RelayPeers that exist
		fail        error
		wantCalls   int
		wantWritten []string
		wantBackoff bool
	}{
		{"written", []string{"b", "c"}, nil, 2, []string{"b", "c"}, false},
		{"a deleted RelayPeer is skipped", []string{"c"}, nil, 2, []string{"c"}, false},
		{"refused: remembered, not retried", []string{"b", "c"}, invalid, 2, []string{"b", "c"}, false},
		{"the API server is away: the round stops", []string{"b", "c"}, errors.New("connection refused"), 1, nil, true},
	} {
		b := newBed(t)
		for _, n := range tc.objs {
			b.api.objs[n] = relayPeer(n, 1, key(t), "10.72.0.0/16")
		}
		b.api.failApply = tc.fail
		b.c.applyStatuses(ctx, jobs("b", "c"), b.now)
		if n := b.api.applyCalls(); n != tc.wantCalls {
			t.Errorf("%s: %d writes tried, want %d", tc.name, n, tc.wantCalls)
		}
		for _, n := range tc.wantWritten {
			if w, ok := b.c.written[n]; !ok || !w.at.Equal(b.now) || w.uid != "uid-"+n {
				t.Errorf("%s: %s not remembered as written at now: %+v", tc.name, n, w)
			}
		}
		if len(b.c.written) != len(tc.wantWritten) {
			t.Errorf("%s: remembered %d, want %v", tc.name, len(b.c.written), tc.wantWritten)
		}
		if got := !b.c.retryAt.IsZero(); got != tc.wantBackoff {
			t.Errorf("%s: backing off %v, want %v", tc.name, got, tc.wantBackoff)
		}
	}
}

func TestApplyStatusesBackoffDoublesAndResets(t *testing.T) {
	b := newBed(t)
	b.api.objs["b"] = relayPeer("b", 1, key(t), "10.72.0.0/16")
	b.api.failApply = errors.New("connection refused")
	for i, want := range []time.Duration{1, 2, 4, 8, 16, 30, 30} {
		b.c.applyStatuses(context.Background(), jobs("b"), b.now)
		if got := b.c.retryAt.Sub(b.now); got != want*time.Second {
			t.Errorf("failure %d: retry in %v, want %v", i+1, got, want*time.Second)
		}
	}
	b.api.failApply = nil
	b.c.applyStatuses(context.Background(), jobs("b"), b.now)
	if b.c.failures != 0 || b.n.n != 1 {
		t.Errorf("after a write works again: %d failures, %d counted writes; want 0 and 1", b.c.failures, b.n.n)
	}
}

func TestStatusJobs(t *testing.T) {
	b := newBed(t)
	if err := b.seed(relayPeer("provider-b", 1, key(t), "10.72.0.0/16")); err != nil {
		t.Fatal(err)
	}
	// Not synced yet: no verdict, no job.
	if err := b.c.informer.GetIndexer().Add(relayPeer("provider-c", 1, key(t), "10.73.0.0/16")); err != nil {
		t.Fatal(err)
	}
	b.c.written["deleted"] = written{}
	js := b.c.statusJobs(nil, b.now)
	if len(js) != 1 || js[0].name != "provider-b" || js[0].st.ObservedGeneration != 1 {
		t.Fatalf("jobs %+v, want provider-b's only", js)
	}
	if _, ok := b.c.written["deleted"]; ok {
		t.Error("a deleted RelayPeer's last write is still remembered")
	}
	// Written, and nothing changed since: no job.
	b.c.wrote(js[0], b.now)
	if js := b.c.statusJobs(nil, b.now.Add(time.Second)); len(js) != 0 {
		t.Errorf("no change: jobs %+v", js)
	}
}
