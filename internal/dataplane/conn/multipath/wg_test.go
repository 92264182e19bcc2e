package multipath

import (
	"crypto/ecdh"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/demo/linkem"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun/tuntest"
)

// This file runs real wireguard-go devices over loopback with our Bind
// wrapping conn.NewStdNetBind(), and wireguard's in-memory ChannelTUN.

// failAfter bounds waits so a broken path fails the test instead of hanging
// it; it never asserts speed.
const failAfter = 10 * time.Second

var loopback = netip.MustParseAddr("127.0.0.1")

// countingBind counts the handshake initiations a device sends, and keeps
// a copy of the last transport data message it sent (what an eavesdropper
// on a path sees).
type countingBind struct {
	conn.Bind
	initiations atomic.Int64

	mu   sync.Mutex
	last []byte
}

func (c *countingBind) Send(bufs [][]byte, ep conn.Endpoint) error {
	for _, b := range bufs {
		switch messageType(b) {
		case msgInitiation:
			c.initiations.Add(1)
		case msgTransport:
			c.mu.Lock()
			c.last = append(c.last[:0], b...)
			c.mu.Unlock()
		}
	}
	return c.Bind.Send(bufs, ep)
}

func (c *countingBind) lastTransport() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.last...)
}

// logSink keeps wireguard-go's log lines, and closes unknownType when
// WireGuard reports a message of unknown type (what a leaked probe is).
type logSink struct {
	mu          sync.Mutex
	lines       []string
	unknownType chan struct{}
}

func newLogSink() *logSink { return &logSink{unknownType: make(chan struct{})} }

func (l *logSink) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.Contains(line, "unknown type") && !l.contains("unknown type") {
		close(l.unknownType)
	}
	l.lines = append(l.lines, line)
}

func (l *logSink) sawUnknownType() bool {
	select {
	case <-l.unknownType:
		return true
	default:
		return false
	}
}

// contains reports whether a line contains s; l.mu must be held.
func (l *logSink) contains(s string) bool {
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

type node struct {
	name    string
	ip      netip.Addr
	dev     *device.Device
	tun     *tuntest.ChannelTUN
	bind    *Bind // nil when running over the plain inner bind
	counter *countingBind
	log     *logSink
	pub     []byte
	port    uint16
}

func key(seed byte) *ecdh.PrivateKey {
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = seed + byte(i)
	}
	k, err := ecdh.X25519().NewPrivateKey(raw)
	if err != nil {
		panic(err)
	}
	return k
}

// newNode starts a device on a random loopback port. With ours false the
// device uses conn.NewDefaultBind() directly (for benchmarks).
func newNode(tb testing.TB, name string, seed byte, ip string, ours bool) *node {
	tb.Helper()
	n := &node{name: name, ip: netip.MustParseAddr(ip), tun: tuntest.NewChannelTUN(), log: newLogSink()}
	n.counter = &countingBind{Bind: conn.NewDefaultBind()}
	var b conn.Bind = n.counter
	dev := n.tun.TUN()
	if ours {
		n.bind = New(n.counter)
		b = n.bind
		dev = n.bind.WrapTUN(dev)
	}
	n.dev = device.NewDevice(dev, b, &device.Logger{Verbosef: n.log.logf, Errorf: n.log.logf})
	n.dev.DisableSomeRoamingForBrokenMobileSemantics()
	k := key(seed)
	n.pub = k.PublicKey().Bytes()
	if err := n.dev.IpcSet("private_key=" + hex.EncodeToString(k.Bytes()) + "\nlisten_port=0\n"); err != nil {
		tb.Fatal(err)
	}
	if err := n.dev.Up(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(n.dev.Close)
	port, err := strconv.ParseUint(n.get(tb, "listen_port"), 10, 16)
	if err != nil {
		tb.Fatal(err)
	}
	n.port = uint16(port)
	return n
}

// get returns the first value of key in the device's UAPI dump.
func (n *node) get(tb testing.TB, key string) string {
	tb.Helper()
	s, err := n.dev.IpcGet()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	return ""
}

func (n *node) addr() netip.AddrPort { return netip.AddrPortFrom(loopback, n.port) }

// addPeer configures peer on n. With our bind the endpoint is logical and
// the paths are given; otherwise the endpoint is paths[0].Addr.
func (n *node) addPeer(tb testing.TB, peer *node, paths []Path) {
	tb.Helper()
	endpoint := paths[0].Addr.String()
	if n.bind != nil {
		n.bind.SetPeer(peer.name, paths)
		endpoint = EndpointString(peer.name)
	}
	cfg := fmt.Sprintf("public_key=%s\nendpoint=%s\nallowed_ip=%s/32\n", hex.EncodeToString(peer.pub), endpoint, peer.ip)
	if err := n.dev.IpcSet(cfg); err != nil {
		tb.Fatal(err)
	}
}

// ping sends one ICMP echo from a to b through the tunnel and waits for it
// to come out of b's TUN.
func ping(tb testing.TB, a, b *node) {
	tb.Helper()
	if err := tryPing(a, b, failAfter); err != nil {
		tb.Fatal(err)
	}
}

func tryPing(a, b *node, wait time.Duration) error {
	msg := tuntest.Ping(b.ip, a.ip)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a.tun.Outbound <- msg:
	case <-timer.C:
		return fmt.Errorf("%s: TUN did not take the packet", a.name)
	}
	for {
		select {
		case got := <-b.tun.Inbound:
			if string(got) == string(msg) {
				return nil
			}
		case <-timer.C:
			return fmt.Errorf("ping %s -> %s: nothing arrived within %v", a.name, b.name, wait)
		}
	}
}

func newLink(t *testing.T, to *node) *linkem.Link {
	t.Helper()
	l, err := linkem.New(to.addr(), linkem.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestDevicesSwitchPathsWithoutHandshake(t *testing.T) {
	a := newNode(t, "a", 1, "10.9.0.1", true)
	b := newNode(t, "b", 101, "10.9.0.2", true)
	// Register closing the links after the devices, so they close first.
	viaAB, viaBA := newLink(t, b), newLink(t, a) // NATing hops: the "consumer" path
	a.addPeer(t, b, []Path{{"direct", b.addr()}, {"consumer", viaAB.Addr()}})
	b.addPeer(t, a, []Path{{"direct", a.addr()}, {"consumer", viaBA.Addr()}})

	ping(t, a, b)
	ping(t, b, a)
	handshakes := a.counter.initiations.Load() + b.counter.initiations.Load()
	if handshakes == 0 {
		t.Fatal("no handshake initiation seen in Send")
	}

	// a switches to the NATed path. b receives from the link's upstream
	// socket, a new source, but keeps its own choice (direct) and its
	// logical endpoint: roaming is off.
	a.bind.SetActive("b", 1)
	for range 5 {
		ping(t, a, b)
		ping(t, b, a)
	}
	if s := viaAB.Stats(); s.ToTarget.Packets < 5 {
		t.Fatalf("a's traffic did not take the consumer path: %+v", s)
	}
	if s := viaAB.Stats(); s.ToClient.Packets != 0 {
		t.Fatalf("b roamed onto the consumer path: %+v", s)
	}
	if got := b.get(t, "endpoint"); got != "peer:a" {
		t.Fatalf("b's endpoint for a is %q, want peer:a", got)
	}
	if p, _ := b.bind.Active("a"); p.Name != "direct" {
		t.Fatalf("b's active path is %v", p)
	}
	// b attributes a's data to a, from the link's NATed source.
	var natSeen bool
	for _, s := range b.bind.RxStats("a") {
		if s.Addr != a.addr() && s.Packets > 0 {
			natSeen = true
		}
	}
	if !natSeen {
		t.Fatalf("b's RxStats for a show no NATed source: %+v (a is %v)", b.bind.RxStats("a"), a.addr())
	}

	// b switches too; both directions now cross links.
	b.bind.SetActive("a", 1)
	for range 5 {
		ping(t, b, a)
		ping(t, a, b)
	}
	if s := viaBA.Stats(); s.ToTarget.Packets < 5 {
		t.Fatalf("b's traffic did not take the consumer path: %+v", s)
	}

	// Cut a's consumer path: a's packets are lost until a fails over.
	viaAB.Cut(true)
	if err := tryPing(a, b, 200*time.Millisecond); err == nil {
		t.Fatal("ping crossed a cut link")
	}
	a.bind.SetActive("b", 0)
	ping(t, a, b)
	ping(t, b, a)

	if got := a.counter.initiations.Load() + b.counter.initiations.Load(); got != handshakes {
		t.Fatalf("path switches caused handshakes: %d initiations, had %d", got, handshakes)
	}
	if a.bind.TxBytes("b") == 0 || b.bind.TxBytes("a") == 0 {
		t.Fatal("TxBytes not counted")
	}
}

func TestDevicesProbesNeverReachWireGuard(t *testing.T) {
	a := newNode(t, "a", 3, "10.9.1.1", true)
	b := newNode(t, "b", 103, "10.9.1.2", true)
	via := newLink(t, b)
	a.addPeer(t, b, []Path{{"direct", b.addr()}, {"consumer", via.Addr()}})
	b.addPeer(t, a, []Path{{"direct", a.addr()}})

	type probeSeen struct {
		pkt  []byte
		from netip.AddrPort
	}
	seen := make(chan probeSeen, 16)
	b.bind.SetProbeHandler(func(pkt []byte, from netip.AddrPort, _ *Outbox) {
		seen <- probeSeen{append([]byte(nil), pkt...), from}
	})
	ping(t, a, b) // sockets and session up

	pkt := make([]byte, 64) // longer than any WireGuard minimum
	pkt[0] = 0xF1
	for i, to := range []netip.AddrPort{b.addr(), via.Addr()} {
		pkt[1] = byte(i)
		if err := a.bind.SendTo(pkt, to); err != nil {
			t.Fatal(err)
		}
		var got probeSeen
		select {
		case got = <-seen:
		case <-time.After(failAfter):
			t.Fatalf("probe %d never reached the handler", i)
		}
		if got.pkt[1] != byte(i) || len(got.pkt) != len(pkt) {
			t.Fatalf("probe %d arrived as % x", i, got.pkt[:2])
		}
		// Same socket as WireGuard: direct probes come from a's WireGuard
		// port; through the link they come from the link's NAT.
		if direct := i == 0; direct != (got.from == a.addr()) {
			t.Fatalf("probe %d from %v (a is %v)", i, got.from, a.addr())
		}
	}
	ping(t, a, b) // the tunnel still works
	if b.log.sawUnknownType() {
		t.Fatal("a probe reached WireGuard")
	}
}

// TestUnwrappedProbeReachesWireGuard shows the previous test can fail: the
// same datagram sent to a device without our bind is seen by WireGuard.
func TestUnwrappedProbeReachesWireGuard(t *testing.T) {
	a := newNode(t, "a", 5, "10.9.2.1", true)
	plain := newNode(t, "plain", 105, "10.9.2.2", false)
	pkt := make([]byte, 64)
	pkt[0] = 0xF1
	if err := a.bind.SendTo(pkt, plain.addr()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-plain.log.unknownType:
	case <-time.After(failAfter):
		t.Fatal("WireGuard never logged the probe")
	}
}

// TestDevicesCreditOnlyAuthenticatedFreshData sends, from a third socket
// (a spoofer on a dead path), messages that carry b's valid receiver index
// for a: a replay of a genuine message a sent, the same header with
// garbage ciphertext, and a future counter with garbage. WireGuard rejects
// them all, so b must credit none of them to the spoofer's address (before,
// the bind counted them by their cleartext index and would have kept a dead
// path up), while a's genuine traffic is still credited to a's address.
func TestDevicesCreditOnlyAuthenticatedFreshData(t *testing.T) {
	a := newNode(t, "a", 7, "10.9.3.1", true)
	b := newNode(t, "b", 107, "10.9.3.2", true)
	a.addPeer(t, b, []Path{{"direct", b.addr()}})
	b.addPeer(t, a, []Path{{"direct", a.addr()}})
	ping(t, a, b)
	ping(t, b, a)
	genuine := a.counter.lastTransport()
	if len(genuine) < minTransportSize || messageType(genuine) != msgTransport {
		t.Fatalf("no transport message captured: % x", genuine)
	}
	before := rxFrom(b.bind.RxStats("a"), a.addr())
	if before == 0 {
		t.Fatalf("a's genuine data not credited: %+v", b.bind.RxStats("a"))
	}

	spoofer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer spoofer.Close()
	garbage := append([]byte(nil), genuine...)
	for i := transportHeader; i < len(garbage); i++ {
		garbage[i] ^= 0x5A
	}
	future := append([]byte(nil), garbage...)
	binary.LittleEndian.PutUint64(future[8:], binary.LittleEndian.Uint64(genuine[8:])+1000)
	to := net.UDPAddrFromAddrPort(b.addr())
	for range 3 {
		for _, pkt := range [][]byte{genuine, garbage, future} {
			if _, err := spoofer.WriteToUDP(pkt, to); err != nil {
				t.Fatal(err)
			}
		}
	}
	// b handles a's messages in the order its socket received them: once
	// this ping is out of b's TUN, the spoofed ones are behind us.
	ping(t, a, b)

	spoofAddr := spoofer.LocalAddr().(*net.UDPAddr).AddrPort()
	if n := rxFrom(b.bind.RxStats("a"), spoofAddr); n != 0 {
		t.Fatalf("b credited %d spoofed or replayed messages to the spoofer %v: %+v", n, spoofAddr, b.bind.RxStats("a"))
	}
	if after := rxFrom(b.bind.RxStats("a"), a.addr()); after <= before {
		t.Fatalf("a's genuine ping not credited: %d packets, had %d", after, before)
	}
}

// rxFrom is the packets credited to src in stats.
func rxFrom(stats []Source, src netip.AddrPort) uint64 {
	for _, s := range stats {
		if s.Addr == src {
			return s.Packets
		}
	}
	return 0
}
