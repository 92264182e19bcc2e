package netstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	wgtun "golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/dataplane/tun/tuntest"
)

// Addresses of the two stacks the tests connect back to back. Peer "a" is
// the dialling side; peer "b" owns exportedV4/V6 and forwards them.
var (
	ownA4 = netip.MustParsePrefix("10.0.0.1/32")
	ownA6 = netip.MustParsePrefix("fd00::1/128")
	ownB4 = netip.MustParsePrefix("10.0.0.2/32")
	ownB6 = netip.MustParsePrefix("fd00::2/128")

	exportV4 = netip.MustParsePrefix("10.99.0.0/16")
	exportV6 = netip.MustParsePrefix("fd99::/64")
)

// loopbackDial maps any exported address to the same port on 127.0.0.1, where
// the test runs its servers; gVisor would not forward to 127/8 itself.
func loopbackDial(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, err
	}
	if !exportV4.Contains(ap.Addr()) && !exportV6.Contains(ap.Addr()) {
		return nil, fmt.Errorf("test dialer: %s is not exported", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ap.Port()))))
}

type testMesh struct {
	a, b  *Netstack
	close func() // idempotent; also run by cleanup
}

// newTestMesh builds stacks a and b and wires them through a tuntest pair:
// a <-> pair end x <-> pair end y <-> b. Cleanup closes everything and
// waits for the pumps.
func newTestMesh(t testing.TB, tuning nsTuning) *testMesh {
	t.Helper()
	return newLossyMesh(t, tuning, nil)
}

// newLossyMesh is newTestMesh with drop consulted for every packet going
// from a towards b (nil: no loss). drop is only called from one goroutine.
func newLossyMesh(t testing.TB, tuning nsTuning, drop func() bool) *testMesh {
	t.Helper()
	a, err := newNetstack(Options{Addresses: []netip.Prefix{ownA4, ownA6}, MTU: 1420}, tuning)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newNetstack(Options{
		Addresses: []netip.Prefix{ownB4, ownB6},
		MTU:       1420,
		Exports:   []netip.Prefix{exportV4, exportV6},
		Dial:      loopbackDial,
	}, tuning)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	x, y := tuntest.NewPair(1420)
	var wg sync.WaitGroup
	for i, p := range [][2]wgtun.Device{{a, x}, {x, a}, {b, y}, {y, b}} {
		var d func() bool
		if i == 0 {
			d = drop
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pump(p[0], p[1], d)
		}()
	}
	var once sync.Once
	closeAll := func() {
		once.Do(func() {
			a.Close()
			b.Close()
			x.Close()
			y.Close()
			wg.Wait()
		})
	}
	t.Cleanup(closeAll)
	return &testMesh{a: a, b: b, close: closeAll}
}

// pump copies packets from src to dst until either is closed, dropping those
// for which drop (if not nil) returns true.
func pump(src, dst wgtun.Device, drop func() bool) {
	bs := src.BatchSize()
	bufs := make([][]byte, bs)
	for i := range bufs {
		bufs[i] = make([]byte, 65535)
	}
	sizes := make([]int, bs)
	for {
		n, err := src.Read(bufs, sizes, 0)
		if err != nil {
			return
		}
		out := make([][]byte, 0, n)
		for i := 0; i < n; i++ {
			if drop == nil || !drop() {
				out = append(out, bufs[i][:sizes[i]])
			}
		}
		if _, err := dst.Write(out, 0); err != nil {
			return
		}
	}
}

// echoTCP serves TCP echo on 127.0.0.1 until cleanup. Each connection is
// echoed until the client half-closes; the server then half-closes too.
func echoTCP(t testing.TB) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveEcho(t, ln)
}

func serveEcho(t testing.TB, ln net.Listener) uint16 {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
				if hc, ok := c.(interface{ CloseWrite() error }); ok {
					hc.CloseWrite()
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return addrPort(ln.Addr()).Port()
}

// echoUDP serves UDP echo on 127.0.0.1 until cleanup.
func echoUDP(t testing.TB) uint16 {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return servePacketEcho(t, pc)
}

func servePacketEcho(t testing.TB, pc net.PacketConn) uint16 {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 65535)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:n], from)
		}
	}()
	t.Cleanup(func() {
		pc.Close()
		<-done
	})
	return addrPort(pc.LocalAddr()).Port()
}

// closedPort returns a loopback TCP port nothing listens on.
func closedPort(t testing.TB) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := addrPort(ln.Addr()).Port()
	ln.Close()
	return p
}

// roundTripTCP writes msg, half-closes, and returns everything read back.
func roundTripTCP(c net.Conn, msg []byte) ([]byte, error) {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		if err == nil {
			err = c.(interface{ CloseWrite() error }).CloseWrite()
		}
		errc <- err
	}()
	got, rerr := io.ReadAll(c)
	return got, errors.Join(<-errc, rerr)
}

// addrPort returns the address and port of a TCP or UDP address.
func addrPort(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.AddrPort()
	case *net.UDPAddr:
		return a.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}
