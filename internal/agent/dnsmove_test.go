package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/status"
	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// movingName is a resolver whose one name's address the test moves; with
// fail set, every lookup fails with it.
type movingName struct {
	host string
	mu   sync.Mutex
	addr netip.Addr
	fail error
}

func (m *movingName) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

func (m *movingName) set(a netip.Addr) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addr = a
}

func (m *movingName) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host != m.host {
		return nil, fmt.Errorf("no such host %q", host)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	return []netip.Addr{m.addr}, nil
}

// udpForwarder is a load balancer's address: it forwards datagrams to
// target and the answers back, one upstream socket per client.
type udpForwarder struct {
	front   *net.UDPConn
	target  netip.AddrPort
	mu      sync.Mutex
	clients map[netip.AddrPort]*net.UDPConn
	wg      sync.WaitGroup
}

func newForwarder(t *testing.T, at netip.AddrPort, target netip.AddrPort) (*udpForwarder, error) {
	front, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(at))
	if err != nil {
		return nil, err
	}
	f := &udpForwarder{front: front, target: target, clients: map[netip.AddrPort]*net.UDPConn{}}
	f.wg.Go(f.readFront)
	t.Cleanup(f.close)
	return f, nil
}

func (f *udpForwarder) addr() netip.AddrPort { return f.front.LocalAddr().(*net.UDPAddr).AddrPort() }

func (f *udpForwarder) readFront() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := f.front.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		f.mu.Lock()
		up, ok := f.clients[from]
		if !ok && f.clients != nil {
			up, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(f.target))
			if err == nil {
				f.clients[from] = up
				f.wg.Go(func() { f.readUpstream(up, from) })
			}
		}
		f.mu.Unlock()
		if up != nil {
			_, _ = up.Write(buf[:n])
		}
	}
}

func (f *udpForwarder) readUpstream(up *net.UDPConn, client netip.AddrPort) {
	buf := make([]byte, 64<<10)
	for {
		n, err := up.Read(buf)
		if err != nil {
			return
		}
		_, _ = f.front.WriteToUDPAddrPort(buf[:n], client)
	}
}

// close stops forwarding: the address is dead from now on.
func (f *udpForwarder) close() {
	_ = f.front.Close()
	f.mu.Lock()
	for _, c := range f.clients {
		_ = c.Close()
	}
	f.clients = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// forwarderPair listens on 127.0.0.2 and 127.0.0.3 on one port, both
// forwarding to target: a name's old and new address.
func forwarderPair(t *testing.T, target netip.AddrPort) (old, next *udpForwarder) {
	t.Helper()
	for range 20 {
		o, err := newForwarder(t, netip.MustParseAddrPort("127.0.0.2:0"), target)
		if err != nil {
			t.Fatal(err)
		}
		n, err := newForwarder(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.3"), o.addr().Port()), target)
		if err == nil {
			return o, n
		}
		o.close()
	}
	t.Fatal("no port free on both 127.0.0.2 and 127.0.0.3")
	return nil, nil
}

// TestEndpointNameMovesMidStream: provider-a reaches provider-b through a
// host name; mid-stream the name moves to another address and the old one
// dies. The relay follows the name on its next refresh and the stream
// recovers, without a new WireGuard handshake. The time from the move to
// the first echo of a message sent after it is reported (DNSMOVE_OUT
// writes it as JSON for perf/dnsmove.sh), not asserted.
func TestEndpointNameMovesMidStream(t *testing.T) {
	mp := startMovingPair(t)
	a, mA, name, oldFwd, newFwd := mp.a, mp.metrics, mp.name, mp.oldFwd, mp.newFwd
	conn, err := a.DialContext(mp.ctx, "udp", netip.AddrPortFrom(overlay(2), podPort).String())
	if err != nil {
		t.Fatal(err)
	}
	s := startStream(conn)
	defer s.close()
	s.waitCount(t, 50, waitTimeout)
	hsBefore := lbPath(t, a).hs
	if os.Getenv("DNSMOVE_OUT") != "" {
		// Measuring: move at a random phase of the 750 ms refresh cycle,
		// so that the runs spread over it (the stream's start otherwise
		// fixes the phase).
		time.Sleep(time.Duration(rand.Int64N(int64(750 * time.Millisecond)))) // real: a random phase of the real resolver's refresh cycle (measuring only)
	}

	moved := time.Now()
	name.set(newFwd.addr().Addr())
	oldFwd.close()
	before := s.count()
	deadline := time.Now().Add(waitTimeout)
	var after []echo
	for n := before + 1; len(after) == 0; n++ {
		s.waitCount(t, n, time.Until(deadline))
		after = sentAfter(s.since(before), moved)
	}
	recovery := after[0].at.Sub(moved)

	got := lbPath(t, a)
	if got.path.Address != newFwd.addr().String() {
		t.Fatalf("path lb address %q, want %s", got.path.Address, newFwd.addr())
	}
	if n := sumMetric(t, mA, "relay_dns_endpoint_changes_total", nil); n != 1 {
		t.Errorf("relay_dns_endpoint_changes_total = %v, want 1", n)
	}
	if n := sumMetric(t, mA, "relay_dns_lookups_total", map[string]string{"result": "ok"}); n < 2 {
		t.Errorf("relay_dns_lookups_total{result=ok} = %v, want at least 2", n)
	}
	t.Logf("recovered %s after the name moved (dns.minTTL 1s: refresh every 750ms); handshake before %v, after %v",
		recovery.Round(time.Millisecond), hsBefore.Time, got.hs.Time)
	if out := os.Getenv("DNSMOVE_OUT"); out != "" {
		data, _ := json.Marshal(map[string]any{
			"scenario": "dnsmove", "refreshSeconds": 0.75,
			"recoverySeconds": recovery.Seconds(), "newHandshake": !got.hs.Equal(hsBefore.Time),
		})
		if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// movingPair is TestEndpointNameMovesMidStream's federation: provider-a,
// whose path lb to provider-b is a host name resolved by name, first to
// oldFwd's address; both relays run until the test ends.
type movingPair struct {
	a              *agent.Agent
	metrics        *metrics.Metrics // a's
	name           *movingName
	oldFwd, newFwd *udpForwarder
	ctx            context.Context // the relays' context
}

// startMovingPair builds and runs the movingPair, with an echo server on
// provider-b's overlay address.
func startMovingPair(t *testing.T) movingPair {
	log := testLogger(t)
	f := mesh.New(log)
	t.Cleanup(func() { _ = f.Close() })
	ra, err := f.Add(&mesh.Relay{Name: relayA, Overlay: netip.PrefixFrom(overlay(1), 32), Exports: netip.MustParsePrefix("10.244.1.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := f.Add(&mesh.Relay{Name: relayB, Overlay: netip.PrefixFrom(overlay(2), 32), Exports: netip.MustParsePrefix("10.244.2.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	path, err := f.Connect(relayA, relayB, "lb")
	if err != nil {
		t.Fatal(err)
	}
	mp := movingPair{metrics: metrics.New()}
	mp.oldFwd, mp.newFwd = forwarderPair(t, netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), rb.Port))
	const host = "gw-b.relay.test"
	mp.name = &movingName{host: host, addr: mp.oldFwd.addr().Addr()}

	// A's path to B is the name, on the forwarders' port; the name is
	// refreshed every 0.75 s (dns.minTTL 1s: the fake resolver gives no TTL).
	textA := strings.Replace(f.RenderConfig(ra), path.Endpoint(relayA).String(), fmt.Sprintf("%s:%d", host, mp.oldFwd.addr().Port()), 1)
	textA += "dns: {minTTL: 1s}\n"
	cfgA, err := config.Parse([]byte(textA))
	if err != nil {
		t.Fatalf("%v\n%s", err, textA)
	}
	cfgB, err := config.Parse([]byte(f.RenderConfig(rb)))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfgA, agent.Options{Logger: log.With("relay", relayA), AdminAddr: "-", Resolver: mp.name, Metrics: mp.metrics})
	if err != nil {
		t.Fatal(err)
	}
	b, err := agent.New(cfgB, agent.Options{Logger: log.With("relay", relayB), AdminAddr: "-"})
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	ln, err := b.ListenUDP(netip.AddrPortFrom(overlay(2), podPort))
	if err != nil {
		t.Fatal(err)
	}
	go serveEchoUDP(ln)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = a.Run(ctx) })
	wg.Go(func() { _ = b.Run(ctx) })
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait() })
	mp.a, mp.ctx = a, ctx
	return mp
}

type lbState struct {
	path status.PathStatus
	hs   status.Time
}

// lbPath returns A's status of its path to B and the last handshake.
func lbPath(t *testing.T, a *agent.Agent) lbState {
	t.Helper()
	st, err := a.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Peers {
		if p.Name == relayB && len(p.Paths) == 1 {
			return lbState{p.Paths[0], p.LastHandshake}
		}
	}
	t.Fatal(errors.New("no path lb to provider-b in the status"))
	return lbState{}
}
