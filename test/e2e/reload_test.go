package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/status"
)

// TestE2EReloadSIGHUP: a changed path bias applied by SIGHUP moves the
// peer's traffic to the consumer path while a TCP stream keeps going; an
// invalid file and SIGHUP leave the relay running on its last good
// configuration.
func TestE2EReloadSIGHUP(t *testing.T) {
	requirePing(t)
	top := NewTopology(t, Options{})
	ra, rb := top.Relays(t, RelaySpec{}, RelaySpec{})
	ra.Start()
	rb.Start()
	ra.WaitActive("direct", 15*time.Second)
	startEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort))

	// A stream of small echoes for the whole reload; any failure fails.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var streamErr error
	echoes := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := echoOnce(top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, echoPort), 64<<10); err != nil {
				streamErr = err
				return
			}
			echoes++
		}
	}()
	var stopOnce sync.Once
	stopStream := func() {
		stopOnce.Do(func() {
			cancel()
			wg.Wait()
		})
	}
	defer stopStream()

	hs := mustStatus(t, ra).Peers[0].LastHandshake
	applied := strings.Count(ra.Proc.Output(), "configuration applied")
	gen := mustStatus(t, ra).ConfigGeneration
	// Make the direct path dearer than the consumer one (5 ms): after
	// betterHold (2 s) the consumer path takes over.
	ra.WriteConfig(RelaySpec{Bias: map[string]string{"direct": "20ms", "consumer": "5ms"}, PathOrder: []string{"consumer", "direct"}})
	if err := syscall.Kill(ra.Proc.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	ps := ra.WaitActive("consumer", 15*time.Second)
	for _, p := range ps.Paths {
		t.Logf("after reload: path %s bias %.0f ms state %s", p.Name, p.Bias, p.State)
	}
	if n := strings.Count(ra.Proc.Output(), "configuration applied"); n != applied+1 {
		t.Errorf("%q logged %d times after the reload, want %d", "configuration applied", n, applied+1)
	}
	if g := mustStatus(t, ra).ConfigGeneration; g <= gen {
		t.Errorf("config generation %d after the reload, want > %d", g, gen)
	}
	for _, ev := range mustStatus(t, ra).Events {
		t.Logf("event: %s %s -> %s (%s)", ev.Peer, ev.From, ev.To, ev.Reason)
	}
	mustPing(t, top.A.Pod, top.B.PodIP, 5)

	// An invalid file: rejected, the relay keeps running as it was.
	ra.writeFile(ra.YAML(ra.spec) + "bogusField: 1\n")
	gen = mustStatus(t, ra).ConfigGeneration
	if err := syscall.Kill(ra.Proc.Pid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the reload is rejected in the log", func() (bool, string) {
		return strings.Contains(ra.Proc.Output(), "reload rejected"), "not yet"
	})
	for _, line := range strings.Split(ra.Proc.Output(), "\n") {
		if strings.Contains(line, "reload rejected") {
			t.Logf("log: %s", line)
		}
	}
	select {
	case <-ra.Proc.Done():
		t.Fatalf("relay exited after an invalid reload:\n%s", ra.Proc.Output())
	default:
	}
	st := mustStatus(t, ra)
	if st.ConfigGeneration != gen {
		t.Errorf("config generation went from %d to %d on a rejected reload", gen, st.ConfigGeneration)
	}
	ra.WaitActive("consumer", 5*time.Second)
	mustPing(t, top.A.Pod, top.B.PodIP, 5)
	stopStream()
	if streamErr != nil {
		t.Fatalf("traffic broke across the reloads after %d echoes: %v", echoes, streamErr)
	}
	t.Logf("%d TCP echoes of 64 KiB ran without error across the reloads", echoes)
	// A path change needs no new handshake (the Bind picks the path per
	// packet); the session from before the reload carried everything.
	if got := mustStatus(t, ra).Peers[0].LastHandshake; got != hs {
		t.Errorf("last handshake moved from %v to %v across the reload: the reload disturbed the peer", hs, got)
	}
	ra.Stop()
	rb.Stop()
}

// mustStatus fetches the relay's status or fails the test.
func mustStatus(t *testing.T, r *Relay) *status.Status {
	t.Helper()
	st, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
