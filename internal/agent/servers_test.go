package agent_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// This file holds the test's "pods": echo servers on the host (behind the
// relays' exports) and inside the netstacks (on the overlay addresses), a
// TCP sink for bulk transfers, and the clients that talk to them.

// conns tracks a server's open connections so that closing the server ends
// every goroutine it started.
type conns struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

func (c *conns) add(x net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if c.m == nil {
		c.m = map[net.Conn]struct{}{}
	}
	c.m[x] = struct{}{}
	return true
}

func (c *conns) remove(x net.Conn) {
	c.mu.Lock()
	delete(c.m, x)
	c.mu.Unlock()
}

func (c *conns) closeAll() {
	c.mu.Lock()
	c.closed = true
	for x := range c.m {
		x.Close()
	}
	c.mu.Unlock()
}

// serveEchoTCP echoes every connection accepted on ln until ln is closed;
// then it closes the connections and waits for their goroutines.
func serveEchoTCP(ln net.Listener) {
	var cs conns
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cs.closeAll()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if !cs.add(c) {
			c.Close()
			return
		}
		wg.Go(func() {
			defer cs.remove(c)
			defer c.Close()
			_, _ = io.Copy(c, c)
		})
	}
}

// serveEchoUDP echoes every datagram to its sender until c is closed.
func serveEchoUDP(c net.PacketConn) {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = c.WriteTo(buf[:n], from)
	}
}

// hostEcho is the TCP and UDP echo "pod" on the host's loopback.
type hostEcho struct {
	tcp net.Listener
	udp net.PacketConn
	wg  sync.WaitGroup
}

func newHostEcho() (*hostEcho, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return nil, err
	}
	e := &hostEcho{tcp: ln, udp: pc}
	e.wg.Go(func() { serveEchoTCP(ln) })
	e.wg.Go(func() { serveEchoUDP(pc) })
	return e, nil
}

func (e *hostEcho) close() {
	e.tcp.Close()
	e.udp.Close()
	e.wg.Wait()
}

// hostSink accepts TCP connections and hands them to the test, which reads
// them itself (to time the arrival of each chunk).
type hostSink struct {
	ln    net.Listener
	conns chan net.Conn
	wg    sync.WaitGroup
	cs    conns
}

func newHostSink() (*hostSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &hostSink{ln: ln, conns: make(chan net.Conn, 16)}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !s.cs.add(c) {
				c.Close()
				return
			}
			select {
			case s.conns <- c:
			default:
				c.Close() // nobody wants it
			}
		}
	})
	return s, nil
}

func (s *hostSink) close() {
	s.ln.Close()
	s.wg.Wait()
	s.cs.closeAll()
}

// echoOnce sends msg over c and checks that it comes back, retrying a
// datagram a few times (UDP may lose the first one while paths settle).
func echoOnce(c net.Conn, msg []byte, udp bool) error {
	buf := make([]byte, len(msg)+1)
	tries := 1
	if udp {
		tries = 5
	}
	var last error
	for range tries {
		if err := c.SetDeadline(time.Now().Add(3 * time.Second)); err != nil {
			return err
		}
		if _, err := c.Write(msg); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		var n int
		var err error
		if udp {
			n, err = c.Read(buf)
		} else {
			n, err = io.ReadFull(c, buf[:len(msg)])
		}
		if err != nil {
			last = fmt.Errorf("read: %w", err)
			var ne net.Error
			if udp && errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return last
		}
		if string(buf[:n]) != string(msg) {
			return fmt.Errorf("echo: got %q, want %q", buf[:n], msg)
		}
		return nil
	}
	return last
}
