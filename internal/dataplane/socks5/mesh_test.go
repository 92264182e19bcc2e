package socks5

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	wgtun "golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/dataplane/netstack"
	"github.com/liqo-relay/relay/internal/dataplane/tun/tuntest"
)

// The proxy's tests run it into a real mesh: two netstacks back to back.

var _ Mesh = (*netstack.Netstack)(nil)

// testTimeout bounds operations that should finish at once; it only turns a
// hang into a failure and is never what a test measures.
const testTimeout = 20 * time.Second

// Addresses of the two stacks. The proxy serves into "a"; "b" owns
// exportV4/V6 and forwards them to the test's loopback servers.
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
	a, b  *netstack.Netstack
	close func() // idempotent; also run by cleanup
}

// newTestMesh builds stacks a and b and wires them through a tuntest pair:
// a <-> pair end x <-> pair end y <-> b. Cleanup closes everything and
// waits for the pumps.
func newTestMesh(t testing.TB) *testMesh {
	t.Helper()
	a, err := netstack.New(netstack.Options{Addresses: []netip.Prefix{ownA4, ownA6}, MTU: 1420})
	if err != nil {
		t.Fatal(err)
	}
	b, err := netstack.New(netstack.Options{
		Addresses: []netip.Prefix{ownB4, ownB6},
		MTU:       1420,
		Exports:   []netip.Prefix{exportV4, exportV6},
		Dial:      loopbackDial,
	})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	x, y := tuntest.NewPair(1420)
	var wg sync.WaitGroup
	for _, p := range [][2]wgtun.Device{{a, x}, {x, a}, {b, y}, {y, b}} {
		wg.Go(func() { pump(p[0], p[1]) })
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

// pump copies packets from src to dst until either is closed.
func pump(src, dst wgtun.Device) {
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
		out := make([][]byte, n)
		for i := range n {
			out[i] = bufs[i][:sizes[i]]
		}
		if _, err := dst.Write(out, 0); err != nil {
			return
		}
	}
}

func randBytes(seed int64, n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

// echoTCP serves TCP echo on 127.0.0.1 until cleanup. Each connection is
// echoed until the client half-closes; the server then half-closes too.
func echoTCP(t testing.TB) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				io.Copy(c, c)
				c.(halfCloser).CloseWrite()
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return socksAddrPort(ln.Addr()).Port()
}

// echoUDP serves UDP echo on 127.0.0.1 until cleanup.
func echoUDP(t testing.TB) uint16 {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	return socksAddrPort(pc.LocalAddr()).Port()
}

// closedPort returns a loopback TCP port nothing listens on.
func closedPort(t testing.TB) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := socksAddrPort(ln.Addr()).Port()
	ln.Close()
	return p
}

// roundTripTCP writes msg, half-closes, and returns everything read back.
func roundTripTCP(c net.Conn, msg []byte) ([]byte, error) {
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		if err == nil {
			err = c.(halfCloser).CloseWrite()
		}
		errc <- err
	}()
	got, rerr := io.ReadAll(c)
	return got, errors.Join(<-errc, rerr)
}
