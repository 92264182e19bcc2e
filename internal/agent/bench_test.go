package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
	"github.com/liqo-relay/relay/internal/dataplane/netstack"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// This file measures bulk TCP through two netstack relays in one process:
// a client dials through relay A (its DialContext), the bytes cross
// WireGuard over UDP on loopback, relay B's netstack forwards them to a
// sink (its Dial hook) that counts and discards. MB/s is the goodput.
//
//	go test -run '^$' -bench NetstackPair -benchtime 400x ./internal/agent/
//
// Sub-benchmarks:
//   - relay: two agents (pipeline, multipath Bind over conn.NewStdNetBind,
//     probes) on loopback with no emulated link;
//   - relay-translated: the same with B's exports seen by A under a
//     remapped prefix (seesUs), so every packet is translated both ways;
//   - relay-linkem: two agents joined by internal/demo/mesh's zero-delay
//     linkem hop, to show what the emulated link costs;
//   - wg-stock and wg-multipath: the comparison harness, two bare
//     wireguard-go devices over internal/dataplane/netstack Netstacks (no pipeline, no probes)
//     whose only difference is the Bind: conn.NewDefaultBind(), or our
//     multipath Bind wrapping conn.NewDefaultBind().

// benchChunk is what the client writes per iteration: b.N chunks make one
// stream, so MB/s is a steady-state figure after the first window.
const benchChunk = 64 << 10

// setupTimeout bounds the handshake and the first connection; a benchmark
// whose pair never connects fails instead of hanging. It asserts nothing
// about speed.
const setupTimeout = 20 * time.Second

// sink counts the bytes its connections receive and wakes a waiter.
type sink struct {
	n     atomic.Int64
	wake  chan struct{}
	mu    sync.Mutex
	conns []*sinkConn
}

func newSink() *sink { return &sink{wake: make(chan struct{}, 1)} }

// dial is a netstack Dial hook: every forwarded connection ends here.
func (s *sink) dial(_ context.Context, _, _ string) (net.Conn, error) {
	c := &sinkConn{s: s, closed: make(chan struct{})}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	return c, nil
}

// waitFor blocks until the sink has received total bytes, or fails b.
func (s *sink) waitFor(b *testing.B, total int64) {
	b.Helper()
	timer := time.NewTimer(setupTimeout)
	defer timer.Stop()
	for s.n.Load() < total {
		select {
		case <-s.wake:
		case <-timer.C:
			b.Fatalf("sink got %d of %d bytes, then nothing for %v", s.n.Load(), total, setupTimeout)
		}
		timer.Reset(setupTimeout)
	}
}

func (s *sink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

// sinkConn is the backend side of one forwarded connection: writes are
// counted and dropped, reads block until Close.
type sinkConn struct {
	s      *sink
	closed chan struct{}
	once   sync.Once
}

func (c *sinkConn) Write(p []byte) (int, error) {
	c.s.n.Add(int64(len(p)))
	select {
	case c.s.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (c *sinkConn) Read([]byte) (int, error) {
	<-c.closed
	return 0, io.EOF
}

func (c *sinkConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *sinkConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *sinkConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *sinkConn) SetDeadline(time.Time) error      { return nil }
func (c *sinkConn) SetReadDeadline(time.Time) error  { return nil }
func (c *sinkConn) SetWriteDeadline(time.Time) error { return nil }

// dialer is how the client side reaches the mesh.
type dialer func(ctx context.Context, network, address string) (net.Conn, error)

// bulk streams b.N chunks through dial to addr and waits until the sink has
// them all; the connection is opened before the timer starts.
func bulk(b *testing.B, dial dialer, addr string, s *sink) {
	ctx, cancel := context.WithTimeout(b.Context(), setupTimeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		b.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	buf := make([]byte, benchChunk)
	base := s.n.Load()
	cpu0 := processCPU(b)
	b.SetBytes(benchChunk)
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	s.waitFor(b, base+int64(b.N)*benchChunk)
	b.StopTimer()
	// CPU per byte (both relays, client and sink: the whole process)
	// suffers less than MB/s from the other tenants of a shared machine.
	cpu := processCPU(b) - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(int64(b.N)*benchChunk), "cpu-ns/B")
}

// processCPU is the CPU time, user and system, of this process so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkNetstackPair(b *testing.B) {
	b.Run("relay", func(b *testing.B) {
		s := newSink()
		a := startAgentPair(b, s, false)
		b.Run("tcp", func(b *testing.B) { bulk(b, a.DialContext, "10.244.2.5:5001", s) })
	})
	b.Run("relay-translated", func(b *testing.B) {
		s := newSink()
		a := startAgentPair(b, s, true)
		b.Run("tcp", func(b *testing.B) { bulk(b, a.DialContext, "10.72.0.5:5001", s) })
	})
	b.Run("relay-linkem", func(b *testing.B) {
		s := newSink()
		a := startLinkemPair(b, s)
		b.Run("tcp", func(b *testing.B) { bulk(b, a.DialContext, "10.244.2.5:5001", s) })
	})
	b.Run("wg-stock", func(b *testing.B) {
		s := newSink()
		a := startWGPair(b, s, false)
		b.Run("tcp", func(b *testing.B) { bulk(b, a.DialContext, "10.244.2.5:5001", s) })
	})
	b.Run("wg-multipath", func(b *testing.B) {
		s := newSink()
		a := startWGPair(b, s, true)
		b.Run("tcp", func(b *testing.B) { bulk(b, a.DialContext, "10.244.2.5:5001", s) })
	})
}

func newKey(b *testing.B) keys.Private {
	var k keys.Private
	if _, err := rand.Read(k[:]); err != nil {
		b.Fatal(err)
	}
	k[0] &= 248
	k[31] = (k[31] & 127) | 64
	return k
}

func freeUDPPort(b *testing.B) uint16 {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

// startAgentPair runs relays A (100.80.0.1, exports 10.244.1.0/24) and B
// (100.80.0.2, exports 10.244.2.0/24, or 10.244.0.0/24 seen by A as
// 10.72.0.0/24 when translated) peered directly on loopback, B's exports
// ending in s. It returns A.
func startAgentPair(b *testing.B, s *sink, translated bool) *agent.Agent {
	ka, kb := newKey(b), newKey(b)
	pa, pb := freeUDPPort(b), freeUDPPort(b)
	bExports, bAsSeenByA, seesUs := "10.244.2.0/24", "10.244.2.0/24", ""
	if translated {
		bExports, bAsSeenByA = "10.244.0.0/24", "10.72.0.0/24"
		seesUs = "    seesUs: [{real: 10.244.0.0/24, as: 10.72.0.0/24}]\n"
	}
	cfgA := fmt.Sprintf(`name: a
privateKey: %s
listenPort: %d
mode: netstack
addresses: [100.80.0.1/32]
exports: [10.244.1.0/24]
peers:
  - name: b
    publicKey: %s
    prefixes: [100.80.0.2/32, %s]
    paths: [{name: direct, endpoint: "127.0.0.1:%d"}]
`, ka.Reveal(), pa, kb.PublicKey(), bAsSeenByA, pb)
	cfgB := fmt.Sprintf(`name: b
privateKey: %s
listenPort: %d
mode: netstack
addresses: [100.80.0.2/32]
exports: [%s]
peers:
  - name: a
    publicKey: %s
    prefixes: [100.80.0.1/32, 10.244.1.0/24]
%s    paths: [{name: direct, endpoint: "127.0.0.1:%d"}]
`, kb.Reveal(), pb, bExports, ka.PublicKey(), seesUs, pa)
	a := runAgent(b, cfgA, nil)
	runAgent(b, cfgB, s.dial)
	b.Cleanup(s.close)
	return a
}

// runAgent starts an agent and stops it when the benchmark ends.
func runAgent(b *testing.B, yaml string, dial dialer) *agent.Agent {
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		b.Fatalf("config: %v\n%s", err, yaml)
	}
	ag, err := agent.New(cfg, agent.Options{AdminAddr: "-", NetstackDial: dial})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("agent %s: %v", cfg.Name, err)
		}
		ag.Close()
	})
	return ag
}

// startLinkemPair is startAgentPair's untranslated pair joined by
// internal/demo/mesh's zero-delay emulated link instead of directly.
func startLinkemPair(b *testing.B, s *sink) *agent.Agent {
	f := mesh.New(nil)
	b.Cleanup(func() { _ = f.Close() })
	for _, r := range []*mesh.Relay{
		{Name: "a", Overlay: netip.MustParsePrefix("100.80.0.1/32"), Exports: netip.MustParsePrefix("10.244.1.0/24")},
		{Name: "b", Overlay: netip.MustParsePrefix("100.80.0.2/32"), Exports: netip.MustParsePrefix("10.244.2.0/24"), Dial: s.dial},
	} {
		if _, err := f.Add(r); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := f.Connect("a", "b", "direct"); err != nil {
		b.Fatal(err)
	}
	if err := f.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.close)
	return f.Relay("a").Agent
}

// startWGPair is the comparison harness: two wireguard-go devices over
// internal/dataplane/netstack Netstacks, configured through IpcSet like any wireguard-go user
// would, with conn.NewDefaultBind() or our Bind around it. There is no
// pipeline, no probe and no agent.
func startWGPair(b *testing.B, s *sink, useMultipath bool) *netstack.Netstack {
	ka, kb := newKey(b), newKey(b)
	pa, pb := freeUDPPort(b), freeUDPPort(b)
	nsA := wgDevice(b, ka, pa, netstack.Options{
		Addresses: []netip.Prefix{netip.MustParsePrefix("100.80.0.1/32")},
		Exports:   []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")},
		MTU:       1280,
	}, kb.PublicKey(), pb, []string{"100.80.0.2/32", "10.244.2.0/24"}, useMultipath)
	wgDevice(b, kb, pb, netstack.Options{
		Addresses: []netip.Prefix{netip.MustParsePrefix("100.80.0.2/32")},
		Exports:   []netip.Prefix{netip.MustParsePrefix("10.244.2.0/24")},
		MTU:       1280,
		Dial:      s.dial,
	}, ka.PublicKey(), pa, []string{"100.80.0.1/32", "10.244.1.0/24"}, useMultipath)
	b.Cleanup(s.close)
	return nsA
}

// wgDevice brings up one device of startWGPair with a single peer.
func wgDevice(b *testing.B, key keys.Private, port uint16, opts netstack.Options,
	peer keys.Public, peerPort uint16, allowed []string, useMultipath bool) *netstack.Netstack {
	ns, err := netstack.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	var cb conn.Bind = conn.NewDefaultBind()
	endpoint := fmt.Sprintf("127.0.0.1:%d", peerPort)
	if useMultipath {
		mb := multipath.New(cb)
		mb.SetPeer("peer", []multipath.Path{{Name: "direct", Addr: netip.MustParseAddrPort(endpoint)}})
		cb, endpoint = mb, multipath.EndpointString("peer")
	}
	dev := device.NewDevice(ns, cb, device.NewLogger(device.LogLevelSilent, ""))
	b.Cleanup(dev.Close) // closes ns and the bind too
	if useMultipath {
		dev.DisableSomeRoamingForBrokenMobileSemantics()
	}
	var uapi strings.Builder
	fmt.Fprintf(&uapi, "private_key=%s\nlisten_port=%d\npublic_key=%s\nendpoint=%s\n",
		hex.EncodeToString(key[:]), port, hex.EncodeToString(peer[:]), endpoint)
	for _, a := range allowed {
		fmt.Fprintf(&uapi, "allowed_ip=%s\n", a)
	}
	if err := dev.IpcSet(uapi.String()); err != nil {
		b.Fatal(err)
	}
	if err := dev.Up(); err != nil {
		b.Fatal(err)
	}
	return ns
}
