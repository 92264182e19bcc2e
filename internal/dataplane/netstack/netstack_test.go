package netstack

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	wgtun "golang.zx2c4.com/wireguard/tun"
)

// testTimeout bounds operations that should finish at once; it only turns a
// hang into a failure and is never what a test measures.
const testTimeout = 20 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func TestNetstackTCPForwardToExported(t *testing.T) {
	m := newTestMesh(t, nsTuned)
	port := echoTCP(t)
	for i, dst := range []string{"10.99.0.7", "fd99::7"} {
		t.Run(dst, func(t *testing.T) {
			c, err := m.a.DialContext(testCtx(t), "tcp", netip.AddrPortFrom(netip.MustParseAddr(dst), port).String())
			if err != nil {
				t.Fatalf("dial through the forwarder: %v", err)
			}
			defer c.Close()
			msg := randBytes(int64(i), 1<<20) // several windows' worth
			got, err := roundTripTCP(c, msg)
			if err != nil {
				t.Fatalf("round trip: %v", err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("echo returned %d bytes, want the %d sent", len(got), len(msg))
			}
		})
	}
	if got := m.b.Stats().TCPForwarded; got != 2 {
		t.Errorf("TCPForwarded = %d, want 2", got)
	}
}

func TestNetstackTCPRefused(t *testing.T) {
	m := newTestMesh(t, nsTuned)
	tests := []struct {
		name, addr      string
		wantDialFailure uint64
	}{
		{"exported, closed backend port", netip.AddrPortFrom(netip.MustParseAddr("10.99.0.7"), closedPort(t)).String(), 1},
		{"own address, no listener", "10.0.0.2:81", 0},
		{"own v6 address, no listener", "[fd00::2]:81", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := m.b.Stats().TCPDialFailures
			c, err := m.a.DialContext(testCtx(t), "tcp", tt.addr)
			if err == nil {
				c.Close()
				t.Fatal("dial succeeded, want connection refused")
			}
			if !strings.Contains(err.Error(), "refused") {
				t.Fatalf("dial error %q, want a connection refused", err)
			}
			if got := m.b.Stats().TCPDialFailures - before; got != tt.wantDialFailure {
				t.Errorf("TCPDialFailures grew by %d, want %d", got, tt.wantDialFailure)
			}
		})
	}
}

func TestNetstackListeners(t *testing.T) {
	m := newTestMesh(t, nsTuned)
	for _, own := range []netip.Prefix{ownB4, ownB6} {
		t.Run("tcp "+own.Addr().String(), func(t *testing.T) {
			ln, err := m.b.ListenTCP(netip.AddrPortFrom(own.Addr(), 80))
			if err != nil {
				t.Fatal(err)
			}
			serveEcho(t, ln)
			c, err := m.a.DialContext(testCtx(t), "tcp", netip.AddrPortFrom(own.Addr(), 80).String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if src := addrPort(c.LocalAddr()).Addr(); !(src == ownA4.Addr() || src == ownA6.Addr()) {
				t.Errorf("dial source %s, want one of a's own addresses", src)
			}
			msg := randBytes(3, 100<<10)
			got, err := roundTripTCP(c, msg)
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("round trip: %d bytes back, err %v", len(got), err)
			}
		})
		t.Run("udp "+own.Addr().String(), func(t *testing.T) {
			pc, err := m.b.ListenUDP(netip.AddrPortFrom(own.Addr(), 53))
			if err != nil {
				t.Fatal(err)
			}
			servePacketEcho(t, pc)
			c, err := m.a.DialContext(testCtx(t), "udp", netip.AddrPortFrom(own.Addr(), 53).String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			udpEcho(t, c, []byte("hello "+own.String()))
		})
	}
	if _, err := m.b.ListenTCP(netip.MustParseAddrPort("10.99.0.1:80")); !errors.Is(err, ErrNotOwnAddress) {
		t.Errorf("ListenTCP on an exported address: err = %v, want ErrNotOwnAddress", err)
	}
}

// udpEcho sends msg on c and expects it back.
func udpEcho(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := c.Write(msg); err != nil {
		t.Fatalf("udp write: %v", err)
	}
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("udp read: %v", err)
	}
	if !bytes.Equal(buf[:n], msg) {
		t.Fatalf("udp echo %q, want %q", buf[:n], msg)
	}
}

func TestNetstackUDPForwardAndIdleReap(t *testing.T) {
	m := newTestMesh(t, nsTuned)
	port := echoUDP(t)
	for _, dst := range []string{"10.99.0.9", "fd99::9"} {
		t.Run(dst, func(t *testing.T) {
			c, err := m.a.DialContext(testCtx(t), "udp", netip.AddrPortFrom(netip.MustParseAddr(dst), port).String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 3; i++ { // one flow, several datagrams
				udpEcho(t, c, randBytes(int64(i), 1000))
			}
		})
	}
	if s := m.b.Stats(); s.UDPFlows != 2 {
		t.Fatalf("UDPFlows = %d, want 2 (one per 4-tuple)", s.UDPFlows)
	}
	if got := m.b.reapUDP(time.Now()); got != 0 {
		t.Fatalf("reapUDP(now) closed %d fresh flows, want 0", got)
	}
	if got := m.b.reapUDP(time.Now().Add(m.b.udpIdle + time.Second)); got != 2 {
		t.Fatalf("reapUDP(after idle timeout) closed %d flows, want 2", got)
	}
	if got := m.b.Stats().UDPIdleClosed; got != 2 {
		t.Errorf("UDPIdleClosed = %d, want 2", got)
	}
	// A datagram after the reap opens a fresh flow.
	c, err := m.a.DialContext(testCtx(t), "udp", netip.AddrPortFrom(netip.MustParseAddr("10.99.0.9"), port).String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	udpEcho(t, c, []byte("again"))
	if got := m.b.Stats().UDPFlows; got != 3 {
		t.Errorf("UDPFlows = %d after the reap, want 3", got)
	}
}

func TestNetstackFiltersUnexported(t *testing.T) {
	b, err := New(Options{Addresses: []netip.Prefix{ownB4}, Exports: []netip.Prefix{exportV4}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tests := []struct {
		name     string
		pkt      []byte
		filtered bool
	}{
		{"udp to unexported", udp4Packet(ownA4.Addr(), netip.MustParseAddr("192.168.1.1"), 53), true},
		{"echo to exported host", echo4Packet(ownA4.Addr(), netip.MustParseAddr("10.99.0.1"), 1, 1), true},
		{"udp to exported", udp4Packet(ownA4.Addr(), netip.MustParseAddr("10.99.0.1"), 1), false},
		{"echo to own", echo4Packet(ownA4.Addr(), ownB4.Addr(), 1, 1), false},
		{"not ip", []byte{0x20, 1, 2, 3}, true},
		{"short v4", []byte{0x45, 0, 0}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := b.Stats().Filtered
			if _, err := b.Write([][]byte{tt.pkt}, 0); err != nil {
				t.Fatal(err)
			}
			if got := b.Stats().Filtered - before; got != map[bool]uint64{true: 1}[tt.filtered] {
				t.Errorf("Filtered grew by %d, want filtered=%v", got, tt.filtered)
			}
		})
	}
}

func TestNetstackCloseSemantics(t *testing.T) {
	n, err := New(Options{Addresses: []netip.Prefix{ownA4}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-n.Events(); ev != wgtun.EventUp {
		t.Fatalf("first event %v, want EventUp", ev)
	}
	readErr := make(chan error)
	go func() {
		_, err := n.Read([][]byte{make([]byte, 2000)}, make([]int, 1), 0)
		readErr <- err
	}()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; !errors.Is(err, os.ErrClosed) {
		t.Errorf("blocked Read after Close: %v, want os.ErrClosed", err)
	}
	if _, err := n.Write([][]byte{echo4Packet(ownB4.Addr(), ownA4.Addr(), 1, 1)}, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Close: %v, want os.ErrClosed", err)
	}
	if _, ok := <-n.Events(); ok {
		t.Error("Events still open after Close")
	}
	if _, err := n.DialContext(context.Background(), "tcp", "10.0.0.2:1"); !errors.Is(err, net.ErrClosed) {
		t.Errorf("DialContext after Close: %v, want net.ErrClosed", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestNetstackOptionsValidation(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"tiny MTU", Options{MTU: 500}, "MTU"},
		{"invalid address", Options{Addresses: []netip.Prefix{{}}}, "Addresses[0]"},
		{"invalid export", Options{Exports: []netip.Prefix{{}}}, "Exports[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := New(tt.opts)
			if err == nil {
				n.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestNetstackDialErrors(t *testing.T) {
	n, err := New(Options{Addresses: []netip.Prefix{ownA4}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	tests := []struct{ network, addr, want string }{
		{"tcp", "[fd00::2]:80", ErrNoSourceAddress.Error()},
		{"tcp", "example.com:80", "dial"},
		{"sctp", "10.0.0.2:80", "unsupported network"},
		{"tcp6", "10.0.0.2:80", "does not match"},
	}
	for _, tt := range tests {
		if _, err := n.DialContext(context.Background(), tt.network, tt.addr); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DialContext(%s, %s) = %v, want error containing %q", tt.network, tt.addr, err, tt.want)
		}
	}
}

func TestNetstackUDPToOwnAddressWithoutListener(t *testing.T) {
	m := newTestMesh(t, nsTuned)
	pc, err := m.b.ListenUDP(netip.MustParseAddrPort("10.0.0.2:53"))
	if err != nil {
		t.Fatal(err)
	}
	servePacketEcho(t, pc)
	closed, err := m.a.DialContext(testCtx(t), "udp", "10.0.0.2:9999")
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	if _, err := closed.Write([]byte("anyone?")); err != nil {
		t.Fatal(err)
	}
	// The links and b are FIFO: once the echo from port 53 is back, b's
	// answer to the datagram for port 9999 has reached a before it.
	open, err := m.a.DialContext(testCtx(t), "udp", "10.0.0.2:53")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	udpEcho(t, open, []byte("marker"))
	if got := m.a.stack.Stats().ICMP.V4.PacketsReceived.DstUnreachable.Value(); got != 1 {
		t.Fatalf("a received %d ICMP destination unreachable, want 1 (port unreachable from b)", got)
	}
}

// TestNetstackTCPSurvivesLoss guards the tuning: with 1% of the packets
// towards b lost, a bulk transfer must still complete (gVisor's cubic with
// SACK stalls here for good).
func TestNetstackTCPSurvivesLoss(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	m := newLossyMesh(t, nsTuned, func() bool { return rng.Intn(100) == 0 })
	ln, err := m.b.ListenTCP(netip.MustParseAddrPort("10.0.0.2:80"))
	if err != nil {
		t.Fatal(err)
	}
	serveEcho(t, ln)
	c, err := m.a.DialContext(testCtx(t), "tcp", "10.0.0.2:80")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	msg := randBytes(9, 4<<20)
	got, err := roundTripTCP(c, msg)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("round trip under loss: %d of %d bytes back, err %v", len(got), len(msg), err)
	}
}
