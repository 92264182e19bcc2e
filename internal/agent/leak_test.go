package agent_test

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestNoGoroutineLeft runs a federation with traffic twice and checks that
// after closing the second one the goroutine count is back to what it was
// before it. The first round warms up what is started once per process
// (gVisor's and the runtime's own goroutines), so only what a relay leaves
// behind is counted.
func TestNoGoroutineLeft(t *testing.T) {
	round := func() {
		t.Run("round", func(t *testing.T) {
			b := newBed(t, bedOptions{Direct: 2 * time.Millisecond, Consumer: 5 * time.Millisecond, AdminA: true})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, network := range []string{"tcp", "udp"} {
				c, err := b.agent(relayA).DialContext(ctx, network, pod(2, podPort).String())
				if err != nil {
					t.Fatal(err)
				}
				if err := echoOnce(c, []byte("leak?"), network == "udp"); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			// A connection left open at close must not pin anything either.
			if _, err := b.agent(relayB).DialContext(ctx, "tcp", pod(1, podPort).String()); err != nil {
				t.Fatal(err)
			}
		})
	}
	round()
	baseline := runtime.NumGoroutine()
	round()
	deadline := time.Now().Add(waitTimeout)
	n := runtime.NumGoroutine()
	for n > baseline && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // real: the relay's goroutines take their time to exit
		n = runtime.NumGoroutine()
	}
	if n > baseline {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after closing the federation, %d before it:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("goroutines: %d before, %d after", baseline, n)
}
