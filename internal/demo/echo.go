package demo

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"
)

// echoServer is the "pod" behind provider-b: it echoes every byte back.
type echoServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newEchoServer() (*echoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &echoServer{ln: ln, conns: map[net.Conn]struct{}{}}
	s.wg.Go(s.serve)
	return s, nil
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			_, _ = io.Copy(c, c)
			_ = c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		})
	}
}

// close stops the server and waits for its goroutines.
func (s *echoServer) close() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// streamInterval is how often the client sends a message. 10 ms makes a
// 100-packet-per-second stream: enough to resolve interruptions to ~10 ms.
const streamInterval = 10 * time.Millisecond

// gapThreshold is the silence that counts as an interruption: three
// messages missed in a row, well above the jitter of loopback.
const gapThreshold = 3 * streamInterval

// gap is a silence in the echo stream longer than gapThreshold.
type gap struct {
	start time.Time // when the last echo before the silence arrived
	d     time.Duration
}

// streamStats is what the client measured.
type streamStats struct {
	Sent, Echoed uint64
	LastRTT      time.Duration
	Gaps         []gap
	Stalled      time.Duration // current silence, 0 when flowing
}

// stream sends timestamped messages over conn and measures the echoes.
type stream struct {
	conn  net.Conn
	mu    sync.Mutex
	stats streamStats
	last  time.Time // when the last echo arrived
	wg    sync.WaitGroup
	stop  chan struct{}
}

func startStream(conn net.Conn) *stream {
	s := &stream{conn: conn, stop: make(chan struct{}), last: time.Now()}
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
			_ = s.conn.SetWriteDeadline(now.Add(5 * time.Second))
			if _, err := s.conn.Write(msg[:]); err != nil {
				return
			}
			s.mu.Lock()
			s.stats.Sent++
			s.mu.Unlock()
		}
	}
}

func (s *stream) receive() {
	var msg [16]byte
	for {
		if _, err := io.ReadFull(s.conn, msg[:]); err != nil {
			return
		}
		now := time.Now()
		sent := time.Unix(0, int64(binary.BigEndian.Uint64(msg[8:])))
		s.mu.Lock()
		if d := now.Sub(s.last); d > gapThreshold && s.stats.Echoed > 0 {
			s.stats.Gaps = append(s.stats.Gaps, gap{start: s.last, d: d - streamInterval})
		}
		s.last = now
		s.stats.Echoed++
		s.stats.LastRTT = now.Sub(sent)
		s.mu.Unlock()
	}
}

// snapshot returns what the client measured so far. A silence still going
// on is in Stalled and, as a gap so far, at the end of Gaps.
func (s *stream) snapshot() streamStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Gaps = append([]gap(nil), s.stats.Gaps...)
	if silence := time.Since(s.last); silence > gapThreshold && s.stats.Echoed > 0 {
		st.Stalled = silence
		st.Gaps = append(st.Gaps, gap{start: s.last, d: silence - streamInterval})
	}
	return st
}

func (s *stream) close() {
	close(s.stop)
	_ = s.conn.Close()
	s.wg.Wait()
}
