package linkem

import (
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// failAfter bounds blocking reads so a broken link fails the test instead of
// hanging it; it is never used to assert speed.
const failAfter = 10 * time.Second

func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func addrOf(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

func recv(t *testing.T, c *net.UDPConn) ([]byte, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(failAfter))
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("read on %v: %v", addrOf(c), err)
	}
	return buf[:n], from
}

func send(t *testing.T, c *net.UDPConn, pkt []byte, to netip.AddrPort) {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(pkt, to); err != nil {
		t.Fatal(err)
	}
}

// hooked starts a link whose arrivals are announced on the returned channel,
// so a test can step traffic one datagram at a time without sleeping.
func hooked(t *testing.T, target netip.AddrPort, cfg Config) (*Link, <-chan bool) {
	return hookedQueue(t, target, cfg, maxQueue)
}

func hookedQueue(t *testing.T, target netip.AddrPort, cfg Config, queue int) (*Link, <-chan bool) {
	t.Helper()
	ch := make(chan bool, 1024)
	l, err := newLink(target, cfg, slog.New(slog.DiscardHandler), func(up bool) { ch <- up }, queue)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, ch
}

func TestDelayBothWays(t *testing.T) {
	const delay = 30 * time.Millisecond
	target, cl := listen(t), listen(t)
	l, err := New(addrOf(target), Config{Delay: delay}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	start := time.Now()
	send(t, cl, []byte("ping"), l.Addr())
	got, from := recv(t, target)
	oneWay := time.Since(start)
	if string(got) != "ping" {
		t.Fatalf("target got %q", got)
	}
	send(t, target, []byte("pong"), from)
	got, via := recv(t, cl)
	rtt := time.Since(start)
	if string(got) != "pong" || via != l.Addr() {
		t.Fatalf("client got %q from %v, want pong from %v", got, via, l.Addr())
	}
	// Only lower bounds: a busy machine may add any amount of latency.
	if oneWay < delay {
		t.Errorf("one-way %v < delay %v", oneWay, delay)
	}
	if rtt < 2*delay {
		t.Errorf("round trip %v < 2*delay %v", rtt, 2*delay)
	}
	s := l.Stats()
	if s.ToTarget.Packets != 1 || s.ToClient.Packets != 1 || s.ToTarget.Bytes != 4 {
		t.Errorf("stats %+v", s)
	}
}

func TestNATRewritesSource(t *testing.T) {
	target, c1, c2 := listen(t), listen(t), listen(t)
	l, err := New(addrOf(target), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	send(t, c1, []byte("one"), l.Addr())
	_, from1 := recv(t, target)
	send(t, c2, []byte("two"), l.Addr())
	_, from2 := recv(t, target)
	send(t, c1, []byte("one again"), l.Addr())
	_, from1b := recv(t, target)

	if from1 == addrOf(c1) || from2 == addrOf(c2) {
		t.Fatalf("target saw a client's own address: %v %v", from1, from2)
	}
	if from1 == from2 {
		t.Fatalf("two clients share upstream source %v", from1)
	}
	if from1 != from1b {
		t.Fatalf("client 1 mapping changed: %v then %v", from1, from1b)
	}
	// Replies go back to the right client.
	send(t, target, []byte("for two"), from2)
	if got, _ := recv(t, c2); string(got) != "for two" {
		t.Fatalf("client 2 got %q", got)
	}
	send(t, target, []byte("for one"), from1)
	if got, _ := recv(t, c1); string(got) != "for one" {
		t.Fatalf("client 1 got %q", got)
	}
}

// TestLossSeeded steps datagrams one at a time and checks the link drops
// exactly the ones its seeded draws say, and delivers the rest.
func TestLossSeeded(t *testing.T) {
	const n, seed, loss = 400, 99, 0.25
	target, cl := listen(t), listen(t)
	l, decided := hooked(t, addrOf(target), Config{Loss: loss, Seed: seed})

	ref := newLine(seed, 1)
	admitted := 0
	for i := range n {
		send(t, cl, []byte{byte(i >> 8), byte(i)}, l.Addr())
		<-decided
		if _, ok := ref.admit(Config{Loss: loss}, time.Time{}); !ok {
			continue
		}
		admitted++
		// Read as we go, so the target's socket buffer never overflows.
		got, _ := recv(t, target)
		if int(got[0])<<8|int(got[1]) != i {
			t.Fatalf("target got packet %d, want %d", int(got[0])<<8|int(got[1]), i)
		}
	}
	s := l.Stats().ToTarget
	if s.Lost != uint64(n-admitted) || s.Lost == 0 || s.Packets != uint64(admitted) {
		t.Fatalf("stats %+v, want %d lost", s, n-admitted)
	}
}

func TestCutAndRestore(t *testing.T) {
	target, cl := listen(t), listen(t)
	l, decided := hooked(t, addrOf(target), Config{})

	send(t, cl, []byte("before"), l.Addr())
	<-decided
	_, upstream := recv(t, target)

	l.Cut(true)
	for range 5 {
		send(t, cl, []byte("cut"), l.Addr())
		<-decided
	}
	send(t, target, []byte("cut back"), upstream)
	<-decided

	l.Cut(false)
	send(t, cl, []byte("after"), l.Addr())
	<-decided
	// FIFO: had any cut datagram passed, it would arrive before this one.
	if got, _ := recv(t, target); string(got) != "after" {
		t.Fatalf("target got %q, want after", got)
	}
	send(t, target, []byte("reply"), upstream)
	if got, _ := recv(t, cl); string(got) != "reply" {
		t.Fatalf("client got %q, want reply", got)
	}
	s := l.Stats()
	if s.ToTarget.Cut != 5 || s.ToClient.Cut != 1 {
		t.Fatalf("cut counters %+v", s)
	}
}

func TestJitterKeepsOrderOnTheWire(t *testing.T) {
	const n = 100
	target, cl := listen(t), listen(t)
	l, decided := hooked(t, addrOf(target), Config{Delay: 2 * time.Millisecond, Jitter: 2 * time.Millisecond, Seed: 3})
	for i := range n {
		send(t, cl, []byte{byte(i)}, l.Addr())
		<-decided
	}
	for i := range n {
		if got, _ := recv(t, target); got[0] != byte(i) {
			t.Fatalf("position %d got packet %d", i, got[0])
		}
	}
}

func TestSetChangesDelay(t *testing.T) {
	const delay = 40 * time.Millisecond
	target, cl := listen(t), listen(t)
	l, err := New(addrOf(target), Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Set(Config{Delay: delay})
	start := time.Now()
	send(t, cl, []byte("x"), l.Addr())
	recv(t, target)
	if d := time.Since(start); d < delay {
		t.Fatalf("delivered after %v, want at least %v", d, delay)
	}
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	target, cl := listen(t), listen(t)
	l, err := New(addrOf(target), Config{Delay: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	send(t, cl, []byte("stuck in flight"), l.Addr())
	// Open a second client too, so an upstream reader exists.
	cl2 := listen(t)
	send(t, cl2, []byte("x"), l.Addr())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// A goroutine that has called wg.Done may need a moment to finish
	// returning; yield (not sleep) a bounded number of times.
	buf := make([]byte, 1<<20)
	var stacks string
	for range 1000 {
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "linkem.(*Link)") {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("goroutines left after Close:\n%s", stacks)
}

func TestInvalidTarget(t *testing.T) {
	if _, err := New(netip.AddrPort{}, Config{}, nil); err == nil {
		t.Fatal("New accepted an invalid target")
	}
}

func TestFullDelayLineDrops(t *testing.T) {
	const queue = 8
	target, cl := listen(t), listen(t)
	l, decided := hookedQueue(t, addrOf(target), Config{Delay: time.Hour}, queue)
	for range queue + 3 {
		send(t, cl, []byte("x"), l.Addr())
		<-decided
	}
	if s := l.Stats().ToTarget; s.Overflow != 3 || s.Dropped() != 3 || s.Packets != 0 {
		t.Fatalf("stats %+v, want 3 overflow drops and nothing delivered yet", s)
	}
}
