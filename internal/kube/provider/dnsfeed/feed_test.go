package dnsfeed

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestOptionsWithDefaults(t *testing.T) {
	cs, s := fake.NewClientset(), newSink()
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"no client", Options{Sink: s, Consumer: "c"}, "Client and Sink are required"},
		{"no sink", Options{Client: cs, Consumer: "c"}, "Client and Sink are required"},
		{"no consumer", Options{Client: cs, Sink: s}, "the consumer's cluster ID is required"},
	} {
		if _, err := tc.o.withDefaults(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
		}
	}
	o, err := Options{Client: cs, Sink: s, Consumer: "c"}.withDefaults()
	if err != nil || o.Debounce != DefaultDebounce || o.Logger == nil {
		t.Errorf("defaults: debounce %v, logger %v, err %v", o.Debounce, o.Logger, err)
	}
	if o, _ := (Options{Client: cs, Sink: s, Consumer: "c", Debounce: time.Second}).withDefaults(); o.Debounce != time.Second {
		t.Errorf("a given debounce became %v", o.Debounce)
	}
}

func TestWaitBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		kick := make(chan struct{}, 1)
		kick <- struct{}{}
		start := time.Now()
		go func() {
			time.Sleep(100 * time.Millisecond) // a second change within the burst
			kick <- struct{}{}
		}()
		if !waitBurst(ctx, kick, 200*time.Millisecond) {
			t.Fatal("a burst: ctx reported done")
		}
		if d := time.Since(start); d != 200*time.Millisecond {
			t.Errorf("waited %v, want the debounce, 200ms", d)
		}
		if len(kick) != 0 {
			t.Error("the burst's second kick is left for another pass")
		}
		go cancel()
		if waitBurst(ctx, kick, time.Second) {
			t.Error("ctx ended: waitBurst reported a burst")
		}
	})
}

// stepSink fails while err is set.
type stepSink struct {
	got []map[string][]netip.Addr
	err error
}

func (s *stepSink) SetServiceEndpoints(_ context.Context, svcs map[string][]netip.Addr) error {
	if s.err != nil {
		return s.err
	}
	s.got = append(s.got, svcs)
	return nil
}

func TestFeedPush(t *testing.T) {
	yes := true
	web := slice("shop", "web-refl", "web", "consumer-c", ep(&yes, "10.92.0.12"))
	var listErr error
	retries := 0
	s := &stepSink{}
	f := &feed{consumer: "consumer-c", sink: s, log: slog.New(slog.DiscardHandler), retry: func() { retries++ },
		list: func() ([]*discoveryv1.EndpointSlice, error) { return []*discoveryv1.EndpointSlice{&web}, listErr }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := map[string][]netip.Addr{"web.shop": addrs("10.92.0.12")}

	if !f.push(ctx) || len(s.got) != 1 || !reflect.DeepEqual(s.got[0], want) {
		t.Fatalf("first push: %v", s.got)
	}
	if !f.push(ctx) || len(s.got) != 1 {
		t.Errorf("unchanged: %d sink calls, want 1", len(s.got))
	}
	listErr = errors.New("cache gone")
	if !f.push(ctx) || retries != 1 || len(s.got) != 1 {
		t.Errorf("a failed list: %d retries, %d sink calls", retries, len(s.got))
	}
	listErr = nil
	web.Endpoints = append(web.Endpoints, ep(&yes, "10.92.0.13"))
	s.err = errors.New("agent busy")
	if !f.push(ctx) || retries != 2 || !reflect.DeepEqual(f.last, want) {
		t.Errorf("a failed sink: %d retries, last %v (want the accepted one)", retries, f.last)
	}
	cancel()
	if f.push(ctx) {
		t.Error("the sink failed as ctx ended: push did not report Run done")
	}
}
