package provider_test

import (
	"context"
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// stream sends a numbered datagram every 5 ms from A's netstack to an echo
// server on B's overlay address, and counts the answers.
type stream struct {
	mu      sync.Mutex
	sent    int
	got     map[uint64]bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func() error
}

func startStream(t *testing.T, a, b *relay) *stream {
	t.Helper()
	pc, err := b.agent.ListenUDP(netip.MustParseAddrPort("100.80.0.2:7"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := a.agent.DialContext(ctx, "udp", "100.80.0.2:7")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &stream{got: map[uint64]bool{}, cancel: cancel}
	s.wg.Go(func() { // echo
		buf := make([]byte, 64)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(buf[:n], from)
		}
	})
	s.wg.Go(func() { // answers
		buf := make([]byte, 64)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			if n >= 8 {
				s.mu.Lock()
				s.got[binary.BigEndian.Uint64(buf)] = true
				s.mu.Unlock()
			}
		}
	})
	s.wg.Go(func() { // sender
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var buf [8]byte
		for seq := uint64(0); ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			binary.BigEndian.PutUint64(buf[:], seq)
			if _, err := conn.Write(buf[:]); err == nil {
				s.mu.Lock()
				s.sent++
				s.mu.Unlock()
			}
		}
	})
	s.closers = []func() error{pc.Close, conn.Close}
	return s
}

// stop ends the stream, waits a second for answers in flight and returns
// how many datagrams were sent and how many got no answer.
func (s *stream) stop() (sent, lost int) {
	s.cancel()
	time.Sleep(time.Second) // real: answers still in flight between real relays: nothing to poll for
	for _, c := range s.closers {
		_ = c()
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.sent - len(s.got)
}

// maxRotationLoss bounds the datagrams an in-place key rotation may cost a
// stream: those in flight through the moving relay's WireGuard at the
// instant it moves (internal/agent, rotation.go).
const maxRotationLoss = 20

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // real: polls real relays and a real API server
	}
}
