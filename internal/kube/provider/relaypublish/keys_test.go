package relaypublish

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// TestPublisherShowsKeysAndCallsOnRelay: with Info.Keys the status carries
// the keys as they change (a key rotation), and OnRelay sees the Relay
// before each status is computed.
func TestPublisherShowsKeysAndCallsOnRelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		var mu sync.Mutex
		pub, next, acted := "OLD=", "", ""
		seen := 0
		p := New(Options{Namespace: "ns", Name: "provider-a",
			Info: Info{PublicKey: "IGNORED=", Ready: func() (bool, string) { return true, "" },
				Keys: func() (string, string, string) {
					mu.Lock()
					defer mu.Unlock()
					return pub, next, acted
				}},
			OnRelay: func(_ context.Context, r *v1alpha1.Relay) {
				mu.Lock()
				seen++
				mu.Unlock()
			},
			Relays: f, Services: f})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		defer func() { cancel(); <-done }()

		settled(t, "the status with the old key", func() bool {
			r := f.relay("provider-a")
			return r != nil && r.Status.PublicKey == "OLD=" && r.Status.NextPublicKey == ""
		})
		mu.Lock()
		next, acted = "NEXT=", "r1"
		mu.Unlock()
		p.poke()
		settled(t, "the staged key", func() bool {
			r := f.relay("provider-a")
			return r.Status.PublicKey == "OLD=" && r.Status.NextPublicKey == "NEXT=" && r.Status.KeyRotation == "r1"
		})
		mu.Lock()
		pub, next = "NEXT=", ""
		mu.Unlock()
		p.poke()
		settled(t, "the new key", func() bool {
			r := f.relay("provider-a")
			return r.Status.PublicKey == "NEXT=" && r.Status.NextPublicKey == "" && r.Status.KeyRotation == "r1"
		})
		mu.Lock()
		defer mu.Unlock()
		if seen == 0 {
			t.Error("OnRelay was never called")
		}
	})
}
