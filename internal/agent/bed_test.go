package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/demo/linkem"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// This file is the test bed of the in-process tests: three netstack relays
// on loopback joined by emulated links (internal/demo/mesh), each started with
// its own context, metrics and (optionally) admin server, so that a test can
// stop and restart one relay while the others run.
//
//	provider-a ── direct ── provider-b
//	provider-a ── consumer (two NAT-like hops) ── provider-b
//	provider-a ── direct ── consumer ── direct ── provider-b

// Relay names.
const (
	relayA = "provider-a"
	relayB = "provider-b"
	relayC = "consumer"
)

// podPort is the port of every in-process "pod" service: a TCP and a UDP
// echo behind each relay's exports, and the same on its overlay address.
const podPort = 7

// sinkPort is the port of the TCP sink behind provider-b (bulk transfers).
const sinkPort = 9

// pod returns the address of the "pod" behind relay i (1-based): it lies
// in that relay's exports and its netstack forwards it to a host server.
func pod(i int, port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 244, byte(i), 10}), port)
}

func overlay(i int) netip.Addr { return netip.AddrFrom4([4]byte{100, 80, 0, byte(i)}) }

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("RELAY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: testLogLevel()})).With("test", t.Name())
	}
	return slog.New(slog.DiscardHandler)
}

// bedOptions shape the federation.
type bedOptions struct {
	// Direct is the one-way delay of each direct link; Consumer the delay
	// of each of the two hops of A-B's consumer path.
	Direct, Consumer time.Duration
	// Health is a YAML flow mapping for every relay's `health:`.
	Health string
	// AdminA gives provider-a an admin server on 127.0.0.1:0.
	AdminA bool
}

// bed is a running federation of three relays and their pods.
type bed struct {
	t      *testing.T
	f      *mesh.Federation
	log    *slog.Logger
	direct *mesh.Path // A-B direct
	cons   *mesh.Path // A-B through the consumer
	opts   bedOptions

	echo *hostEcho
	sink *hostSink
	tap  *logTap // every relay's log goes through it

	mu    sync.Mutex
	nodes map[string]*node
}

// node is one running relay.
type node struct {
	r       *mesh.Relay
	agent   *agent.Agent
	metrics *metrics.Metrics
	cancel  context.CancelFunc
	done    chan error
	// Overlay services of this relay (TCP and UDP echo on podPort).
	lnTCP net.Listener
	lnUDP net.PacketConn
	wg    sync.WaitGroup
}

var relayNames = []string{relayA, relayB, relayC}

// tappedMessages are the log messages the bed remembers (see logTap).
var tappedMessages = []string{"peer restarted: starting a new handshake"}

// newBed builds and starts the federation and waits until every relay has a
// WireGuard session with every peer. Everything is torn down at cleanup.
func newBed(t *testing.T, o bedOptions) *bed {
	t.Helper()
	b := &bed{t: t, opts: o, nodes: map[string]*node{}}
	b.tap = newLogTap(testLogger(t).Handler(), tappedMessages...)
	b.log = slog.New(b.tap)
	b.f = mesh.New(b.log)
	var err error
	if b.echo, err = newHostEcho(); err != nil {
		t.Fatal(err)
	}
	if b.sink, err = newHostSink(); err != nil {
		b.echo.close()
		t.Fatal(err)
	}
	t.Cleanup(b.close)
	for i, name := range relayNames {
		_, err := b.f.Add(&mesh.Relay{
			Name:    name,
			Overlay: netip.PrefixFrom(overlay(i+1), 32),
			Exports: netip.PrefixFrom(pod(i+1, 0).Addr(), 24).Masked(),
			Health:  o.Health,
			Dial:    b.dialer(i + 1),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	must := func(p *mesh.Path, err error) *mesh.Path {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	b.direct = must(b.f.Connect(relayA, relayB, "direct", linkem.Config{Delay: o.Direct}))
	b.cons = must(b.f.Connect(relayA, relayB, "consumer", linkem.Config{Delay: o.Consumer}, linkem.Config{Delay: o.Consumer}))
	must(b.f.Connect(relayA, relayC, "direct", linkem.Config{Delay: o.Consumer}))
	must(b.f.Connect(relayB, relayC, "direct", linkem.Config{Delay: o.Consumer}))
	for _, name := range relayNames {
		b.start(name)
	}
	b.waitSessions(relayNames...)
	return b
}

// dialer maps relay i's pod addresses to the host's echo and sink servers,
// as a netstack relay reaches real pods through the host's network.
func (b *bed) dialer(i int) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		var dl net.Dialer
		switch {
		case address == pod(i, podPort).String() && network == "tcp":
			return dl.DialContext(ctx, "tcp", b.echo.tcp.Addr().String())
		case address == pod(i, podPort).String() && network == "udp":
			return dl.DialContext(ctx, "udp", b.echo.udp.LocalAddr().String())
		case address == pod(i, sinkPort).String() && network == "tcp":
			return dl.DialContext(ctx, "tcp", b.sink.ln.Addr().String())
		}
		return nil, fmt.Errorf("bed: no pod at %s/%s", network, address)
	}
}

// config renders relay name's configuration afresh (a new value each time,
// so a test may change it without touching the running one).
func (b *bed) config(name string) *config.Config {
	b.t.Helper()
	r := b.f.Relay(name)
	text := b.f.RenderConfig(r)
	cfg, err := config.Parse([]byte(text))
	if err != nil {
		b.t.Fatalf("config of %s: %v\n%s", name, err, text)
	}
	return cfg
}

// start creates relay name's agent from its rendered configuration (a
// restart keeps the key and port) and runs it with its own context.
func (b *bed) start(name string) *node {
	b.t.Helper()
	r := b.f.Relay(name)
	n := &node{r: r, metrics: metrics.New(), done: make(chan error, 1)}
	addr := "-"
	if name == relayA && b.opts.AdminA {
		addr = "127.0.0.1:0"
	}
	var err error
	n.agent, err = agent.New(b.config(name), agent.Options{
		Logger:       b.log.With("relay", name),
		AdminAddr:    addr,
		NetstackDial: r.Dial,
		Metrics:      n.metrics,
	})
	if err != nil {
		b.t.Fatalf("starting %s: %v", name, err)
	}
	r.Agent = n.agent
	idx := slices.Index(relayNames, name) + 1
	if n.lnTCP, err = n.agent.ListenTCP(netip.AddrPortFrom(overlay(idx), podPort)); err != nil {
		n.agent.Close()
		b.t.Fatalf("%s: ListenTCP: %v", name, err)
	}
	if n.lnUDP, err = n.agent.ListenUDP(netip.AddrPortFrom(overlay(idx), podPort)); err != nil {
		n.lnTCP.Close()
		n.agent.Close()
		b.t.Fatalf("%s: ListenUDP: %v", name, err)
	}
	n.wg.Go(func() { serveEchoTCP(n.lnTCP) })
	n.wg.Go(func() { serveEchoUDP(n.lnUDP) })
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() { n.done <- n.agent.Run(ctx) }()
	b.mu.Lock()
	b.nodes[name] = n
	b.mu.Unlock()
	return n
}

// stop stops relay name and waits for its Run to return.
func (b *bed) stop(name string) {
	b.t.Helper()
	b.mu.Lock()
	n := b.nodes[name]
	delete(b.nodes, name)
	b.mu.Unlock()
	if n == nil {
		return
	}
	if err := n.stop(); err != nil {
		b.t.Errorf("%s: Run: %v", name, err)
	}
}

func (n *node) stop() error {
	n.cancel()
	var err error
	select {
	case err = <-n.done:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("did not stop within 10 s")
	}
	n.lnTCP.Close()
	n.lnUDP.Close()
	n.wg.Wait()
	return err
}

func (b *bed) node(name string) *node {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.nodes[name]
	if n == nil {
		b.t.Fatalf("relay %s is not running", name)
	}
	return n
}

func (b *bed) agent(name string) *agent.Agent { return b.node(name).agent }

func (b *bed) close() {
	b.mu.Lock()
	nodes := b.nodes
	b.nodes = map[string]*node{}
	b.mu.Unlock()
	for name, n := range nodes {
		if err := n.stop(); err != nil {
			b.t.Errorf("%s: Run: %v", name, err)
		}
	}
	if err := b.f.Close(); err != nil {
		b.t.Errorf("closing federation: %v", err)
	}
	b.echo.close()
	b.sink.close()
}

// status returns relay name's status; the test fails if there is none.
func (b *bed) status(name string) status.Status {
	b.t.Helper()
	st, err := b.agent(name).Status(context.Background())
	if err != nil {
		b.t.Fatalf("status of %s: %v", name, err)
	}
	return st
}

// peer returns from's status of peer, and whether it is listed.
func (b *bed) peer(from, peer string) (status.PeerStatus, bool) {
	for _, p := range b.status(from).Peers {
		if p.Name == peer {
			return p, true
		}
	}
	return status.PeerStatus{}, false
}

// activePath is from's active path to peer ("" when unreachable).
func (b *bed) activePath(from, peer string) string {
	p, _ := b.peer(from, peer)
	return p.ActivePath
}

// waitTimeout is the generous deadline of every wait for state: far above
// what any of it takes, so only a real failure trips it.
const waitTimeout = 20 * time.Second

// waitFor polls cond until it holds, failing the test after timeout. The
// agent's state has no change notification, so polling status is the
// honest way to wait for it.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // real: polls relays that run over real sockets and goroutines
	}
	return time.Since(start)
}

// waitSessions waits until every listed relay is reachable with a WireGuard
// session to every peer it has.
func (b *bed) waitSessions(names ...string) {
	b.t.Helper()
	for _, from := range names {
		for _, peer := range relayNames {
			if peer == from {
				continue
			}
			waitFor(b.t, waitTimeout, from+" session with "+peer, func() bool {
				p, ok := b.peer(from, peer)
				return ok && p.Reachable && !p.LastHandshake.IsZero()
			})
		}
	}
}

// waitActive waits until from's active path to peer is path.
func (b *bed) waitActive(from, peer, path string) time.Duration {
	b.t.Helper()
	return waitFor(b.t, waitTimeout, fmt.Sprintf("%s's active path to %s to be %q", from, peer, path), func() bool {
		return b.activePath(from, peer) == path
	})
}

// counter sums the samples of the metric family name on relay from's
// registry whose labels include all of want.
func (b *bed) counter(from, name string, want map[string]string) float64 {
	b.t.Helper()
	return sumMetric(b.t, b.node(from).metrics, name, want)
}

func sumMetric(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	var sum float64
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if hasLabels(s, want) {
				sum += value(s)
			}
		}
	}
	return sum
}

func hasLabels(s *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range s.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func value(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// seriesWithLabel counts the series on relay from that carry label=value.
func (b *bed) seriesWithLabel(from, label, val string) []string {
	b.t.Helper()
	fams, err := b.node(from).metrics.Registry().Gather()
	if err != nil {
		b.t.Fatalf("gathering metrics: %v", err)
	}
	var out []string
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == label && l.GetValue() == val {
					out = append(out, f.GetName())
				}
			}
		}
	}
	return out
}
