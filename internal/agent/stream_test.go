package agent_test

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// stream is a steady echo conversation over a TCP connection through the
// relays: a timestamped message every streamInterval, each echo's arrival
// recorded. It measures what an application sees: round trips and gaps.
type stream struct {
	conn net.Conn
	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	echoes  []echo
	changed chan struct{} // closed and replaced on every echo
	err     error         // why the receiver stopped
}

type echo struct {
	at  time.Time
	rtt time.Duration
}

// streamInterval paces the messages: 100 a second resolves an
// interruption to about 10 ms.
const streamInterval = 10 * time.Millisecond

func startStream(conn net.Conn) *stream {
	s := &stream{conn: conn, stop: make(chan struct{}), changed: make(chan struct{})}
	s.wg.Go(s.send)
	s.wg.Go(s.receive)
	return s
}

func (s *stream) send() {
	t := time.NewTicker(streamInterval)
	defer t.Stop()
	var msg [16]byte
	for seq := uint64(1); ; seq++ {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			binary.BigEndian.PutUint64(msg[:8], seq)
			binary.BigEndian.PutUint64(msg[8:], uint64(now.UnixNano()))
			if _, err := s.conn.Write(msg[:]); err != nil {
				return
			}
		}
	}
}

func (s *stream) receive() {
	var msg [16]byte
	for {
		_, err := io.ReadFull(s.conn, msg[:])
		now := time.Now()
		s.mu.Lock()
		if err != nil {
			s.err = err
			close(s.changed)
			s.mu.Unlock()
			return
		}
		sent := time.Unix(0, int64(binary.BigEndian.Uint64(msg[8:])))
		s.echoes = append(s.echoes, echo{at: now, rtt: now.Sub(sent)})
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
}

// count returns the number of echoes so far.
func (s *stream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.echoes)
}

// since returns the echoes from index i on.
func (s *stream) since(i int) []echo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]echo(nil), s.echoes[i:]...)
}

// waitCount waits until n echoes have arrived in all.
func (s *stream) waitCount(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, ch, err := len(s.echoes), s.changed, s.err
		s.mu.Unlock()
		if got >= n {
			return
		}
		if err != nil {
			t.Fatalf("stream ended after %d echoes (want %d): %v", got, n, err)
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("stream: %d echoes after %s, want %d", got, timeout, n)
		}
	}
}

func (s *stream) close() {
	close(s.stop)
	s.conn.Close()
	s.wg.Wait()
}

// maxGap is the longest silence between consecutive echoes.
func maxGap(es []echo) time.Duration {
	var g time.Duration
	for i := 1; i < len(es); i++ {
		g = max(g, es[i].at.Sub(es[i-1].at))
	}
	return g
}

// minRTT is the smallest round trip among es.
func minRTT(es []echo) time.Duration {
	m := time.Duration(1<<63 - 1)
	for _, e := range es {
		m = min(m, e.rtt)
	}
	return m
}

// sentAfter keeps the echoes of messages sent after t.
func sentAfter(es []echo, t time.Time) []echo {
	var out []echo
	for _, e := range es {
		if e.at.Add(-e.rtt).After(t) {
			out = append(out, e)
		}
	}
	return out
}
