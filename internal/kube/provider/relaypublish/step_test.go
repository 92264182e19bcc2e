package relaypublish

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

type counter struct{ n int }

func (c *counter) Inc() { c.n++ }

// failingStatus is the fake whose status writes fail.
type failingStatus struct{ *fakeRelays }

func (failingStatus) ApplyRelayStatus(context.Context, string, string, v1alpha1.RelayStatus) error {
	return errors.New("the API server is away")
}

func stepPublisher(api RelayAPI, f *fakeRelays, writes *counter) *Publisher {
	now := time.Unix(1000, 0)
	return New(Options{Namespace: "ns", Name: "relay-a", Info: Info{PublicKey: "PUB=", ListenPort: 51900},
		Relays: api, Services: f, Writes: writes, Now: func() time.Time { return now }})
}

func TestStepCreatesTheRelayThenWritesItsStatusOnce(t *testing.T) {
	f, writes := newFake(), &counter{}
	p := stepPublisher(f, f, writes)
	sw := &serviceWatch{wg: &sync.WaitGroup{}, cancel: func() {}}
	ctx := context.Background()

	if last := p.step(ctx, sw, nil); last != nil || f.relay("relay-a") == nil || p.relay == nil {
		t.Fatalf("no Relay yet: last %v, created %v, read back %v", last, f.relay("relay-a") != nil, p.relay != nil)
	}
	last := p.step(ctx, sw, nil)
	if last == nil || writes.n != 1 || f.relay("relay-a").Status.PublicKey != "PUB=" {
		t.Fatalf("first status: last %v, %d writes, status %+v", last, writes.n, f.relay("relay-a").Status)
	}
	if again := p.step(ctx, sw, last); again != last || writes.n != 1 {
		t.Errorf("nothing changed: %d writes, last replaced %v", writes.n, again != last)
	}
	// After a resync (last forgotten), a status already in place is adopted
	// without a write.
	p.relay = f.relay("relay-a")
	if adopted := p.step(ctx, sw, nil); adopted == nil || writes.n != 1 {
		t.Errorf("status in place: %d writes, adopted %v", writes.n, adopted != nil)
	}
}

func TestStepKeepsLastWhenTheWriteFails(t *testing.T) {
	f, writes := newFake(), &counter{}
	_ = f.ApplyRelay(context.Background(), "ns", "relay-a", nil)
	p := stepPublisher(failingStatus{f}, f, writes)
	p.relay = f.relay("relay-a")
	sw := &serviceWatch{wg: &sync.WaitGroup{}, cancel: func() {}}
	prev := &v1alpha1.RelayStatus{PublicKey: "OLD="}
	if got := p.step(context.Background(), sw, prev); got != prev || writes.n != 0 {
		t.Errorf("a failed write: last %v, %d writes; want the previous last and none", got, writes.n)
	}
}

func TestStepFollowsTheServiceTheSpecNames(t *testing.T) {
	f := newFake()
	_ = f.ApplyRelay(context.Background(), "ns", "relay-a", nil)
	p := stepPublisher(f, f, &counter{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	sw := &serviceWatch{wg: &wg, cancel: func() {}}

	r := f.relay("relay-a")
	r.Spec.ServiceRef = &v1alpha1.ServiceRef{Name: "relay-udp"}
	p.relay = r
	following := func() string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.svcName
	}
	p.step(ctx, sw, nil)
	if got := following(); got != "relay-udp" {
		t.Fatalf("following %q, want relay-udp", got)
	}
	r = r.DeepCopy()
	r.Spec.ServiceRef = nil
	p.relay = r
	p.step(ctx, sw, nil)
	if got := following(); got != "" {
		t.Errorf("spec names no Service: following %q", got)
	}
}
