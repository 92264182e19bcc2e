package netstack

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// fakeBackend is the host side of a forwarded UDP flow: it reports each
// datagram written to it on got and each Close on closed, and never sends
// anything back.
type fakeBackend struct {
	dst    string
	got    chan<- string
	closed chan<- string
	once   sync.Once
	done   chan struct{}
}

func (b *fakeBackend) Read([]byte) (int, error) { <-b.done; return 0, net.ErrClosed }
func (b *fakeBackend) Write(p []byte) (int, error) {
	select {
	case b.got <- b.dst:
	case <-b.done:
		return 0, net.ErrClosed
	}
	return len(p), nil
}
func (b *fakeBackend) Close() error {
	b.once.Do(func() { close(b.done); b.closed <- b.dst })
	return nil
}
func (b *fakeBackend) LocalAddr() net.Addr              { return &net.UDPAddr{} }
func (b *fakeBackend) RemoteAddr() net.Addr             { return &net.UDPAddr{} }
func (b *fakeBackend) SetDeadline(time.Time) error      { return nil }
func (b *fakeBackend) SetReadDeadline(time.Time) error  { return nil }
func (b *fakeBackend) SetWriteDeadline(time.Time) error { return nil }

// TestNetstackUDPFlowCap fills the flow table of a stack capped at two
// flows, and checks that a third 4-tuple is refused while both flows are
// fresh, that a full table is not rescanned before a flow can have become
// idle enough, and that then the idle flows make room.
func TestNetstackUDPFlowCap(t *testing.T) {
	got, closed := make(chan string, 16), make(chan string, 16)
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		return &fakeBackend{dst: address, got: got, closed: closed, done: make(chan struct{})}, nil
	}
	b, err := New(Options{
		Addresses: []netip.Prefix{ownB4}, Exports: []netip.Prefix{exportV4},
		Dial: dial, UDPMaxFlows: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	b.now = clock.Now
	dst := netip.MustParseAddr("10.99.0.1")
	send := func(port uint16) {
		t.Helper()
		if _, err := b.Write([][]byte{udp4Packet(ownA4.Addr(), dst, port)}, 0); err != nil {
			t.Fatal(err)
		}
	}
	recv := func(ch chan string, want string) {
		t.Helper()
		select {
		case s := <-ch:
			if s != want {
				t.Fatalf("got %s, want %s", s, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("nothing for %s", want)
		}
	}
	check := func(stage string, tracked int, evicted, refused uint64) {
		t.Helper()
		s := b.Stats()
		if s.UDPTracked != tracked || s.UDPEvicted != evicted || s.UDPRefused != refused {
			t.Fatalf("%s: tracked %d, evicted %d, refused %d; want %d, %d, %d", stage, s.UDPTracked, s.UDPEvicted, s.UDPRefused, tracked, evicted, refused)
		}
	}

	// Each flow's first datagram reaches its backend: both flows were
	// active at t0.
	send(1)
	recv(got, "10.99.0.1:1")
	send(2)
	recv(got, "10.99.0.1:2")
	check("two flows", 2, 0, 0)

	clock.Set(t0.Add(time.Second))
	send(3)
	check("full, both fresh", 2, 0, 1)
	for i := 0; i < 100; i++ { // a flood of new 4-tuples
		send(uint16(100 + i))
	}
	check("flood", 2, 0, 101)

	// Just before the oldest flow can be evicted: still refused.
	clock.Set(t0.Add(nsUDPEvictIdle - time.Millisecond))
	send(3)
	check("not yet idle enough", 2, 0, 102)

	// Both flows have been silent for the eviction time: the next new flow
	// evicts them and takes a place.
	clock.Set(t0.Add(nsUDPEvictIdle))
	send(3)
	recv(got, "10.99.0.1:3")
	check("evicted", 1, 2, 102)
	for range 2 {
		select {
		case <-closed:
		case <-time.After(testTimeout):
			t.Fatal("an evicted flow's backend was not closed")
		}
	}
}

// TestNetstackUDPFlowCapKeepsActiveFlows checks that a flow that keeps
// sending is not evicted however long it lives.
func TestNetstackUDPFlowCapKeepsActiveFlows(t *testing.T) {
	n := &Netstack{flows: map[*nsUDPFlow]struct{}{}, udpMax: 1, udpIdle: time.Minute}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := &nsUDPFlow{}
	f.touch(t0)
	n.flows[f] = struct{}{}
	for i := 1; i <= 10; i++ {
		now := t0.Add(time.Duration(i) * time.Minute)
		f.touch(now.Add(-nsUDPEvictIdle + time.Millisecond))
		if ev, ok := n.udpAdmitLocked(now); ok || len(ev) != 0 {
			t.Fatalf("at +%dm: admitted %v, evicted %d; want the active flow kept", i, ok, len(ev))
		}
	}
	if _, ok := n.udpAdmitLocked(t0.Add(20 * time.Minute)); !ok {
		t.Fatal("flow silent for 10 minutes not evicted")
	}
	if n.udpPending != 1 || len(n.flows) != 0 {
		t.Fatalf("pending %d, flows %d; want 1, 0", n.udpPending, len(n.flows))
	}
}
