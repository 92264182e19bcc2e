package e2e

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

const streamPort = 7009

// streamPayload is the size of a stream datagram: a sequence number, the
// send time, and padding to a small packet's size.
const streamPayload = 64

// startUDPEcho runs a UDP echo server on addr inside n: every datagram
// goes back unchanged to where it came from. Like startEcho, the socket is
// made inside the namespace; Cleanup closes it and waits for the server.
func startUDPEcho(t *testing.T, n *netns.NS, addr string) {
	t.Helper()
	var pc net.PacketConn
	if err := n.Do(func() (err error) {
		pc, err = net.ListenPacket("udp4", addr)
		return err
	}); err != nil {
		t.Fatalf("UDP echo listen on %s in %s: %v", addr, n.Name, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			m, from, err := pc.ReadFrom(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // e.g. ECONNREFUSED from an earlier reply's ICMP error
			}
			_, _ = pc.WriteTo(buf[:m], from)
		}
	}()
	t.Cleanup(func() {
		_ = pc.Close()
		<-done
	})
}

// Stream is a continuous UDP packet stream from a pod to a startUDPEcho
// server: one datagram every interval, carrying its sequence number and
// send time, echoed back. It records when each datagram was sent and when
// its echo came back, on this process's clock (the echo makes one clock
// enough, and makes the stream depend on both directions, as a pod's TCP
// connection does).
//
// One goroutine sends, one receives; Stop ends both and waits for them.
type Stream struct {
	conn     *net.UDPConn
	dst      *net.UDPAddr
	interval time.Duration

	mu        sync.Mutex
	sent      []time.Time // by sequence number
	recv      []time.Time // by sequence number; zero until answered
	answered  int
	writeErrs int
	// firstWriteErr is the first send error, to say what it was.
	firstWriteErr error
	// failed marks the sequence numbers whose send failed: they never left
	// the pod, so no relay could lose them.
	failed  map[uint64]bool
	changed chan struct{} // closed and replaced on every echo

	stop chan struct{}
	wg   sync.WaitGroup
}

// StartStream opens a UDP socket inside n (unconnected, so ICMP errors
// while a path is down do not surface as read errors) and starts sending
// to dst every interval. Cleanup stops it.
func StartStream(t *testing.T, n *netns.NS, dst string, interval time.Duration) *Stream {
	t.Helper()
	raddr, err := net.ResolveUDPAddr("udp4", dst)
	if err != nil {
		t.Fatal(err)
	}
	s := &Stream{dst: raddr, interval: interval, changed: make(chan struct{}), stop: make(chan struct{})}
	if err := n.Do(func() (err error) {
		s.conn, err = net.ListenUDP("udp4", &net.UDPAddr{})
		return err
	}); err != nil {
		t.Fatalf("stream socket in %s: %v", n.Name, err)
	}
	s.wg.Add(2)
	go s.send()
	go s.receive()
	t.Cleanup(s.Stop)
	return s
}

// send owns the ticker; it exits when Stop closes s.stop.
func (s *Stream) send() {
	defer s.wg.Done()
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	buf := make([]byte, streamPayload)
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		s.mu.Lock()
		seq := uint64(len(s.sent))
		s.sent = append(s.sent, now)
		s.recv = append(s.recv, time.Time{})
		s.mu.Unlock()
		binary.BigEndian.PutUint64(buf[0:8], seq)
		binary.BigEndian.PutUint64(buf[8:16], uint64(now.UnixNano()))
		if _, err := s.conn.WriteToUDP(buf, s.dst); err != nil {
			s.mu.Lock()
			s.writeErrs++
			if s.firstWriteErr == nil {
				s.firstWriteErr = err
			}
			if s.failed == nil {
				s.failed = map[uint64]bool{}
			}
			s.failed[seq] = true
			s.mu.Unlock()
		}
	}
}

// receive records echoes until the socket is closed.
func (s *Stream) receive() {
	defer s.wg.Done()
	buf := make([]byte, 2048)
	for {
		m, _, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		now := time.Now()
		if m < 16 {
			continue
		}
		seq := binary.BigEndian.Uint64(buf[0:8])
		s.mu.Lock()
		if seq < uint64(len(s.recv)) && s.recv[seq].IsZero() {
			s.recv[seq] = now
			s.answered++
			close(s.changed)
			s.changed = make(chan struct{})
		}
		s.mu.Unlock()
	}
}

// drainWait bounds how long Stop waits for the echoes of the last
// datagrams: far above any RTT in the namespaces.
const drainWait = time.Second

// Stop stops sending, waits for outstanding echoes (at most drainWait),
// closes the socket and waits for both goroutines. It is idempotent.
func (s *Stream) Stop() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	timer := time.NewTimer(drainWait)
	defer timer.Stop()
drain:
	for {
		s.mu.Lock()
		// Outstanding: the last datagram; older unanswered ones are lost.
		pending := len(s.sent) > 0 && s.recv[len(s.recv)-1].IsZero()
		ch := s.changed
		s.mu.Unlock()
		if !pending {
			break
		}
		select {
		case <-ch:
		case <-timer.C:
			break drain
		}
	}
	_ = s.conn.Close()
	s.wg.Wait()
}

// WaitAnsweredAfter waits until a datagram sent after t0 has been echoed
// and returns when its echo arrived.
func (s *Stream) WaitAnsweredAfter(t0 time.Time, within time.Duration) (time.Time, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		s.mu.Lock()
		at, ok := s.firstAnsweredAfterLocked(t0)
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return time.Time{}, fmt.Errorf("no datagram sent after %s echoed within %v", t0.Format("15:04:05.000"), within)
		case <-s.stop:
			return time.Time{}, errors.New("stream stopped")
		}
	}
}

// firstAnsweredAfterLocked finds the earliest echo of a datagram sent
// after t0 (scanning from the end: t0 is recent).
func (s *Stream) firstAnsweredAfterLocked(t0 time.Time) (time.Time, bool) {
	var first time.Time
	for i := len(s.sent) - 1; i >= 0 && s.sent[i].After(t0); i-- {
		if r := s.recv[i]; !r.IsZero() && (first.IsZero() || r.Before(first)) {
			first = r
		}
	}
	return first, !first.IsZero()
}

// Samples returns a copy of what the stream recorded so far.
func (s *Stream) Samples() Samples {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Samples{
		Sent:          append([]time.Time(nil), s.sent...),
		Recv:          append([]time.Time(nil), s.recv...),
		Interval:      s.interval,
		WriteErrs:     s.writeErrs,
		FirstWriteErr: s.firstWriteErr,
		Failed:        maps.Clone(s.failed),
	}
}
