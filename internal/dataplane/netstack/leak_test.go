package netstack

import (
	"bytes"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestNetstackCloseLeavesNoGoroutines opens one of every kind of flow, leaves
// them all open, closes the stacks, and checks that every goroutine the
// Netstack (and gVisor under it) started has exited.
func TestNetstackCloseLeavesNoGoroutines(t *testing.T) {
	tcpPort, udpPort := echoTCP(t), echoUDP(t)
	baseline := runtime.NumGoroutine()

	m := newTestMesh(t, nsTuned)
	ctx := testCtx(t)
	// Forwarded TCP, left open mid-stream.
	c, err := m.a.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("10.99.0.1"), tcpPort).String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	// Forwarded UDP flow, left open.
	u, err := m.a.DialContext(ctx, "udp", netip.AddrPortFrom(netip.MustParseAddr("fd99::1"), udpPort).String())
	if err != nil {
		t.Fatal(err)
	}
	udpEcho(t, u, []byte("y"))
	// A listener with an accepted connection, left open.
	ln, err := m.b.ListenTCP(netip.MustParseAddrPort("10.0.0.2:80"))
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		accepted <- err
	}()
	l, err := m.a.DialContext(ctx, "tcp", "10.0.0.2:80")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
	if s := m.b.Stats(); s.TCPActive != 1 || s.UDPActive != 1 {
		t.Fatalf("before Close: TCPActive %d, UDPActive %d; want 1, 1", s.TCPActive, s.UDPActive)
	}

	m.close()
	c.Close()
	u.Close()

	// Goroutines that were already told to exit need a moment to be
	// scheduled; poll for a bounded time, which never decides the outcome
	// on a healthy run but tolerates a loaded machine.
	deadline := time.Now().Add(testTimeout)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines after Close, baseline %d:\n%s", runtime.NumGoroutine(), baseline, nsOurStacks(buf))
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond) // real: the netstack's goroutines take their time to exit
	}
}

// nsOurStacks keeps the goroutine dumps that mention gVisor or this package.
func nsOurStacks(all []byte) string {
	var keep []string
	for _, g := range bytes.Split(all, []byte("\n\n")) {
		if bytes.Contains(g, []byte("gvisor")) || bytes.Contains(g, []byte("relay/internal/dataplane/netstack")) {
			keep = append(keep, string(g))
		}
	}
	return strings.Join(keep, "\n\n")
}
