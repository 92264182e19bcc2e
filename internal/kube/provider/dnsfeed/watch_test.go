package dnsfeed

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// sink records what Run hands the responder; fail makes the next calls
// fail.
type sink struct {
	mu    sync.Mutex
	got   []map[string][]netip.Addr
	fail  int
	calls chan struct{}
}

func newSink() *sink { return &sink{calls: make(chan struct{}, 100)} }

func (s *sink) SetServiceEndpoints(_ context.Context, svcs map[string][]netip.Addr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.calls <- struct{}{} }()
	if s.fail > 0 {
		s.fail--
		return errors.New("agent busy")
	}
	s.got = append(s.got, svcs)
	return nil
}

func (s *sink) last() (map[string][]netip.Addr, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) == 0 {
		return nil, 0
	}
	return s.got[len(s.got)-1], len(s.got)
}

// waitFor waits until the sink's last accepted value is want.
func (s *sink) waitFor(t *testing.T, want map[string][]netip.Addr) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if got, _ := s.last(); got != nil && reflect.DeepEqual(got, want) {
			return
		}
		select {
		case <-s.calls:
		case <-deadline:
			got, _ := s.last()
			t.Fatalf("sink has %v, want %v", got, want)
		}
	}
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func startRun(t *testing.T, cs *fake.Clientset, s *sink) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Client: cs, Consumer: "consumer-c", Sink: s, Debounce: time.Millisecond})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func TestRunFollowsEndpointSlices(t *testing.T) {
	yes := true
	web := slice("shop", "web-refl", "web", "consumer-c", ep(&yes, "10.92.0.12"))
	other := slice("shop", "db-refl", "db", "consumer-d", ep(&yes, "10.92.0.30"))
	cs := fake.NewClientset(&web, &other)
	s := newSink()
	startRun(t, cs, s)
	s.waitFor(t, map[string][]netip.Addr{"web.shop": addrs("10.92.0.12")})

	ctx := context.Background()
	native := slice("shop", "web-abc", "web", "", ep(&yes, "10.244.1.5"))
	if _, err := cs.DiscoveryV1().EndpointSlices("shop").Create(ctx, &native, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	api := slice("prod", "api-refl", "api", "consumer-c", ep(nil, "10.92.0.40"))
	if _, err := cs.DiscoveryV1().EndpointSlices("prod").Create(ctx, &api, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, map[string][]netip.Addr{
		"web.shop": addrs("10.244.1.5", "10.92.0.12"),
		"api.prod": addrs("10.92.0.40"),
	})

	if err := cs.DiscoveryV1().EndpointSlices("shop").Delete(ctx, "web-refl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// web.shop no longer counts: its only reflected slice is gone.
	s.waitFor(t, map[string][]netip.Addr{"api.prod": addrs("10.92.0.40")})

	if err := cs.DiscoveryV1().EndpointSlices("prod").Delete(ctx, "api-refl", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, map[string][]netip.Addr{})
}

// A change that leaves the result as it was does not call the sink again.
func TestRunSkipsUnchangedResult(t *testing.T) {
	yes := true
	web := slice("shop", "web-refl", "web", "consumer-c", ep(&yes, "10.92.0.12"))
	cs := fake.NewClientset(&web)
	s := newSink()
	startRun(t, cs, s)
	want := map[string][]netip.Addr{"web.shop": addrs("10.92.0.12")}
	s.waitFor(t, want)

	ctx := context.Background()
	other := slice("shop", "db-refl", "db", "consumer-d", ep(&yes, "10.92.0.30"))
	if _, err := cs.DiscoveryV1().EndpointSlices("shop").Create(ctx, &other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web2 := slice("shop", "web-refl2", "web", "consumer-c", ep(&yes, "10.92.0.14"))
	if _, err := cs.DiscoveryV1().EndpointSlices("shop").Create(ctx, &web2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want2 := map[string][]netip.Addr{"web.shop": addrs("10.92.0.12", "10.92.0.14")}
	s.waitFor(t, want2)
	// Calls: the first value, then the second; the db slice (another
	// consumer's) changed nothing, so at most these two were accepted.
	if _, n := s.last(); n != 2 {
		t.Errorf("sink accepted %d values, want 2", n)
	}
}

// A sink that fails is called again with the current value.
func TestRunRetriesFailedSink(t *testing.T) {
	yes := true
	web := slice("shop", "web-refl", "web", "consumer-c", ep(&yes, "10.92.0.12"))
	cs := fake.NewClientset(&web)
	s := newSink()
	s.fail = 2
	startRun(t, cs, s)
	s.waitFor(t, map[string][]netip.Addr{"web.shop": addrs("10.92.0.12")})
}

func TestRunNeedsConsumer(t *testing.T) {
	err := Run(context.Background(), Options{Client: fake.NewClientset(), Sink: newSink()})
	if err == nil {
		t.Fatal("Run without a consumer: no error")
	}
}
