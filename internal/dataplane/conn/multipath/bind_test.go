package multipath

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"

	"github.com/liqo-relay/relay/internal/dataplane/conn/conntest"
	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/tun"
)

var (
	pathA = Path{Name: "direct", Addr: netip.MustParseAddrPort("192.0.2.1:51820")}
	pathB = Path{Name: "consumer", Addr: netip.MustParseAddrPort("198.51.100.7:4000")}
	pathC = Path{Name: "other", Addr: netip.MustParseAddrPort("[2001:db8::1]:443")}
)

// open returns a bind over a fake inner bind, opened, with one receive func.
func open(t testing.TB, batch int) (*Bind, *conntest.Bind, conn.ReceiveFunc) {
	t.Helper()
	inner := conntest.New(batch)
	b := New(inner)
	fns, _, err := b.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, inner, fns[0]
}

func peerEP(t testing.TB, b *Bind, name string) conn.Endpoint {
	t.Helper()
	ep, err := b.ParseEndpoint(EndpointString(name))
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestSendFollowsActivePath(t *testing.T) {
	b, inner, _ := open(t, 1)
	b.SetPeer("b", []Path{pathA, pathB})
	ep := peerEP(t, b, "b")
	parses := inner.Parses()

	steps := []struct {
		setActive int // -1: leave alone
		want      netip.AddrPort
	}{
		{-1, pathA.Addr},
		{1, pathB.Addr},
		{1, pathB.Addr},
		{0, pathA.Addr},
		{7, pathA.Addr},  // out of range: ignored
		{-2, pathA.Addr}, // negative: ignored
	}
	for i, s := range steps {
		if s.setActive != -1 {
			b.SetActive("b", s.setActive)
		}
		if err := b.Send([][]byte{{byte(i)}, {byte(i), 1}}, ep); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		sent := inner.Sent()
		if len(sent) != 2 || sent[0].Addr != s.want || sent[1].Addr != s.want {
			t.Fatalf("step %d: sent %+v, want both to %v", i, sent, s.want)
		}
		if got, _ := b.Active("b"); got.Addr != s.want {
			t.Fatalf("step %d: Active %v, want %v", i, got, s.want)
		}
	}
	if inner.Parses() != parses {
		t.Fatalf("Send parsed endpoints: %d parses, want %d", inner.Parses(), parses)
	}
	if got, want := b.TxBytes("b"), uint64(3*len(steps)); got != want {
		t.Fatalf("TxBytes %d, want %d", got, want)
	}
}

func TestSetPeerKeepsActiveByName(t *testing.T) {
	tests := []struct {
		name   string
		before []Path
		active int
		after  []Path
		want   string
	}{
		{"kept when moved", []Path{pathA, pathB}, 1, []Path{pathB, pathA}, "consumer"},
		{"kept with new address", []Path{pathA, pathB}, 1, []Path{pathA, {Name: "consumer", Addr: pathC.Addr}}, "consumer"},
		{"gone falls back to 0", []Path{pathA, pathB}, 1, []Path{pathC, pathA}, "other"},
		{"first set is 0", nil, 0, []Path{pathB, pathA}, "consumer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, inner, _ := open(t, 1)
			if tt.before != nil {
				b.SetPeer("b", tt.before)
				b.SetActive("b", tt.active)
			}
			b.SetPeer("b", tt.after)
			got, ok := b.Active("b")
			if !ok || got.Name != tt.want {
				t.Fatalf("Active = %v %v, want %s", got, ok, tt.want)
			}
			if err := b.Send([][]byte{{1}}, peerEP(t, b, "b")); err != nil {
				t.Fatal(err)
			}
			if sent := inner.Sent(); sent[0].Addr != got.Addr {
				t.Fatalf("sent to %v, want %v", sent[0].Addr, got.Addr)
			}
		})
	}
}

func TestParseEndpoint(t *testing.T) {
	b, _, _ := open(t, 1)
	early := peerEP(t, b, "late") // before SetPeer: a pathless peer
	if _, ok := b.Active("late"); ok {
		t.Fatal("pathless peer has an active path")
	}
	if err := b.Send([][]byte{{1}}, early); !errors.Is(err, ErrNoPath) {
		t.Fatalf("send to pathless peer: %v, want ErrNoPath", err)
	}
	b.SetPeer("late", []Path{pathB})
	if ep := peerEP(t, b, "late"); ep != early {
		t.Fatal("ParseEndpoint returned a different endpoint for the same peer")
	}
	if err := b.Send([][]byte{{1}}, early); err != nil {
		t.Fatalf("send after SetPeer: %v", err)
	}
	if s := early.DstToString(); s != "peer:late" {
		t.Fatalf("DstToString %q", s)
	}
	if early.DstIP() != pathB.Addr.Addr() {
		t.Fatalf("DstIP %v", early.DstIP())
	}
	if pe := early.(*PeerEndpoint); pe.Peer() != "late" {
		t.Fatalf("Peer %q", pe.Peer())
	}

	ep, err := b.ParseEndpoint("192.0.2.9:7")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ep.(*conntest.Endpoint); !ok {
		t.Fatalf("plain address parsed to %T, want the inner endpoint", ep)
	}
	for _, bad := range []string{"peer:", "nonsense"} {
		if _, err := b.ParseEndpoint(bad); err == nil {
			t.Errorf("ParseEndpoint(%q) succeeded", bad)
		}
	}
}

func TestSendPassesThroughOtherEndpoints(t *testing.T) {
	b, inner, _ := open(t, 1)
	ep, _ := b.ParseEndpoint("203.0.113.5:999")
	if err := b.Send([][]byte{{9}}, ep); err != nil {
		t.Fatal(err)
	}
	if sent := inner.Sent(); len(sent) != 1 || sent[0].Addr.String() != "203.0.113.5:999" {
		t.Fatalf("sent %+v", sent)
	}
}

func TestRemovePeer(t *testing.T) {
	b, _, _ := open(t, 1)
	b.SetPeer("b", []Path{pathA})
	ep := peerEP(t, b, "b")
	b.RemovePeer("b")
	b.RemovePeer("b") // idempotent
	if err := b.Send([][]byte{{1}}, ep); !errors.Is(err, ErrNoPath) {
		t.Fatalf("send to removed peer: %v, want ErrNoPath", err)
	}
	if _, ok := b.Active("b"); ok {
		t.Fatal("removed peer still active")
	}
	b.SetPeer("b", []Path{pathA})
	if err := b.Send([][]byte{{1}}, peerEP(t, b, "b")); err != nil {
		t.Fatalf("send after re-adding: %v", err)
	}
	b.SetPeer("b", nil)
	if err := b.Send([][]byte{{1}}, peerEP(t, b, "b")); !errors.Is(err, ErrNoPath) {
		t.Fatalf("send with no paths: %v, want ErrNoPath", err)
	}
}

func TestClearSrcKeepsChoice(t *testing.T) {
	b, inner, _ := open(t, 1)
	b.SetPeer("b", []Path{pathA, pathB})
	b.SetActive("b", 1)
	ep := peerEP(t, b, "b")
	ep.ClearSrc()
	if got, _ := b.Active("b"); got != pathB {
		t.Fatalf("ClearSrc changed the active path to %v", got)
	}
	b.Send([][]byte{{1}}, ep)
	if sent := inner.Sent(); sent[0].Addr != pathB.Addr {
		t.Fatalf("sent to %v after ClearSrc", sent[0].Addr)
	}
}

// probe builds a probe-looking datagram of n bytes.
func probe(n int) []byte {
	p := make([]byte, n)
	p[0] = 0xF1
	return p
}

// wgMessage builds a WireGuard message of type typ and size n with index
// idx at bytes 4:8.
func wgMessage(typ byte, idx uint32, n int) []byte {
	p := make([]byte, n)
	p[0] = typ
	binary.LittleEndian.PutUint32(p[4:], idx)
	return p
}

// authenticate does what wireguard-go does with the transport messages of
// a received batch that decrypt and pass its replay check: it writes their
// plaintext, in the buffers they were received into, with the 16-byte
// header in front (device/receive.go), to the bind's TUN wrapper.
func authenticate(b *Bind, bufs [][]byte, sizes []int) {
	var out [][]byte
	for i, size := range sizes {
		if size >= minTransportSize && messageType(bufs[i]) == msgTransport {
			out = append(out, bufs[i][:size-16]) // header + plaintext, without the AEAD tag
		}
	}
	_, _ = b.WrapTUN(nopTUN{}).Write(out, transportHeader)
}

// receive runs one receive call over a batch.
func receive(t *testing.T, fn conn.ReceiveFunc, batch int) ([]int, [][]byte, []conn.Endpoint) {
	t.Helper()
	bufs := make([][]byte, batch)
	for i := range bufs {
		bufs[i] = make([]byte, 1500)
	}
	sizes := make([]int, batch)
	eps := make([]conn.Endpoint, batch)
	n, err := fn(bufs, sizes, eps)
	if err != nil {
		t.Fatal(err)
	}
	return sizes[:n], bufs[:n], eps[:n]
}

func TestProbesAreDivertedAndHidden(t *testing.T) {
	b, inner, fn := open(t, 4)
	from := netip.MustParseAddrPort("192.0.2.50:1234")
	type got struct {
		pkt  []byte
		from netip.AddrPort
	}
	var probes []got
	b.SetProbeHandler(func(pkt []byte, from netip.AddrPort, _ *Outbox) {
		probes = append(probes, got{append([]byte(nil), pkt...), from})
	})
	batch := [][]byte{
		wgMessage(msgTransport, 1, 64),
		probe(40),
		wgMessage(msgInitiation, 2, sizeInitiation),
		probe(8),
	}
	for _, p := range batch {
		if err := inner.Inject(p, from); err != nil {
			t.Fatal(err)
		}
	}
	sizes, bufs, eps := receive(t, fn, 4)
	if want := []int{64, 0, sizeInitiation, 0}; !slices.Equal(sizes, want) {
		t.Fatalf("sizes %v, want %v", sizes, want)
	}
	if bufs[0][0] != msgTransport || bufs[2][0] != msgInitiation {
		t.Fatal("WireGuard messages altered")
	}
	if addrOf(eps[0]) != from {
		t.Fatalf("receive endpoint %v, want the real source %v", eps[0].DstToString(), from)
	}
	if len(probes) != 2 || len(probes[0].pkt) != 40 || len(probes[1].pkt) != 8 || probes[0].from != from {
		t.Fatalf("probe handler got %+v", probes)
	}

	// Without a handler, probes are still hidden; a custom predicate applies.
	b.SetProbeHandler(nil)
	b.SetProbePredicate(func(p []byte) bool { return len(p) > 1 && p[1] == 0xAA })
	inner.Inject([]byte{0x00, 0xAA, 3}, from)
	inner.Inject(probe(40), from)
	sizes, _, _ = receive(t, fn, 4)
	if want := []int{0, 40}; !slices.Equal(sizes, want) {
		t.Fatalf("custom predicate: sizes %v, want %v", sizes, want)
	}
}

func TestAttributesDataToPeers(t *testing.T) {
	b, inner, fn := open(t, 8)
	b.SetPeer("b", []Path{pathA, pathB})
	b.SetPeer("c", []Path{pathC})
	epB, epC := peerEP(t, b, "b"), peerEP(t, b, "c")
	srcX := netip.MustParseAddrPort("192.0.2.1:51820")
	srcY := netip.MustParseAddrPort("198.51.100.99:31000") // NATed consumer path

	// We initiate with b (index 0xB1) and respond to c (index 0xC1).
	b.Send([][]byte{wgMessage(msgInitiation, 0xB1, sizeInitiation)}, epB)
	b.Send([][]byte{wgMessage(msgResponse, 0xC1, sizeResponse)}, epC)
	// Wrong sizes teach nothing.
	b.Send([][]byte{wgMessage(msgInitiation, 0xBAD, 100)}, epB)

	inject := func(p []byte, from netip.AddrPort) {
		if err := inner.Inject(p, from); err != nil {
			t.Fatal(err)
		}
	}
	inject(wgMessage(msgTransport, 0xB1, 96), srcX)
	inject(wgMessage(msgTransport, 0xB1, 32), srcY)
	inject(wgMessage(msgTransport, 0xB1, 48), srcX)
	inject(wgMessage(msgTransport, 0xC1, 64), srcX)
	inject(wgMessage(msgTransport, 0xBAD, 64), srcX) // unknown index
	inject(wgMessage(msgTransport, 0xB1, 50), srcX)  // not 16-aligned (a full-MTU message)
	inject(wgMessage(msgTransport, 0xB1, 16), srcX)  // too short
	inject(wgMessage(msgResponse, 0xB1, sizeResponse), srcX)
	sizes, bufs, _ := receive(t, fn, 8)
	if got := b.RxStats("b"); len(got) != 0 {
		t.Fatalf("RxStats(b) = %+v before WireGuard authenticated anything", got)
	}
	authenticate(b, bufs, sizes)

	sortSrc := func(s []Source) []Source {
		slices.SortFunc(s, func(a, b Source) int { return a.Addr.Compare(b.Addr) })
		return s
	}
	if got, want := sortSrc(b.RxStats("b")), []Source{{srcX, 3, 194}, {srcY, 1, 32}}; !slices.Equal(got, want) {
		t.Fatalf("RxStats(b) = %+v, want %+v", got, want)
	}
	if got, want := b.RxStats("c"), []Source{{srcX, 1, 64}}; !slices.Equal(got, want) {
		t.Fatalf("RxStats(c) = %+v, want %+v", got, want)
	}
	if got := b.RxStats("nobody"); got != nil {
		t.Fatalf("RxStats(nobody) = %+v", got)
	}
}

func TestIndicesAreBoundedPerPeer(t *testing.T) {
	b, inner, fn := open(t, 1)
	b.SetPeer("b", []Path{pathA})
	ep := peerEP(t, b, "b")
	src := netip.MustParseAddrPort("192.0.2.1:1")
	for i := range uint32(maxIndices + 2) {
		b.Send([][]byte{wgMessage(msgInitiation, 100+i, sizeInitiation)}, ep)
	}
	if n := len(*b.index.Load()); n != maxIndices {
		t.Fatalf("index table holds %d entries, want %d", n, maxIndices)
	}
	countFor := func(idx uint32) uint64 {
		before := total(b.RxStats("b"))
		inner.Inject(wgMessage(msgTransport, idx, 32), src)
		sizes, bufs, _ := receive(t, fn, 1)
		authenticate(b, bufs, sizes)
		return total(b.RxStats("b")) - before
	}
	if countFor(100) != 0 || countFor(101) != 0 {
		t.Fatal("evicted index still attributed")
	}
	if countFor(102) != 1 || countFor(100+maxIndices+1) != 1 {
		t.Fatal("recent index not attributed")
	}
	b.RemovePeer("b")
	if n := len(*b.index.Load()); n != 0 {
		t.Fatalf("RemovePeer left %d indices", n)
	}
}

func total(s []Source) (n uint64) {
	for _, x := range s {
		n += x.Packets
	}
	return n
}

func TestSourcesAreBounded(t *testing.T) {
	b, inner, fn := open(t, 1)
	b.SetPeer("b", []Path{pathA})
	b.Send([][]byte{wgMessage(msgInitiation, 7, sizeInitiation)}, peerEP(t, b, "b"))
	for port := range uint16(maxSources + 3) {
		inner.Inject(wgMessage(msgTransport, 7, 32), netip.AddrPortFrom(pathA.Addr.Addr(), 1000+port))
		sizes, bufs, _ := receive(t, fn, 1)
		authenticate(b, bufs, sizes)
	}
	got := b.RxStats("b")
	if len(got) != maxSources {
		t.Fatalf("%d sources, want %d", len(got), maxSources)
	}
	for _, s := range got {
		if s.Addr.Port() < 1003 { // the oldest three were replaced
			t.Fatalf("old source %v kept: %+v", s.Addr, got)
		}
	}
}

func TestCloseContract(t *testing.T) {
	inner := conntest.New(1)
	b := New(inner)
	fns, _, err := b.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Open(0); !errors.Is(err, conn.ErrBindAlreadyOpen) {
		t.Fatalf("second Open: %v", err)
	}
	if err := b.SetMark(42); err != nil || inner.Mark() != 42 {
		t.Fatalf("SetMark: %v, inner mark %d", err, inner.Mark())
	}
	if b.BatchSize() != 1 {
		t.Fatal("BatchSize not the inner's")
	}
	done := make(chan error)
	go func() {
		_, err := fns[0](make([][]byte, 1), make([]int, 1), make([]conn.Endpoint, 1))
		done <- err
	}()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("blocked receive returned %v, want net.ErrClosed", err)
	}
	if _, err := fns[0](make([][]byte, 1), make([]int, 1), make([]conn.Endpoint, 1)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("receive after Close: %v, want net.ErrClosed", err)
	}
	if err := b.SendTo([]byte{0xF1}, pathA.Addr); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("SendTo after Close: %v", err)
	}
	if _, _, err := b.Open(0); err != nil {
		t.Fatalf("reopen: %v", err)
	}
	b.Close()
}

func TestSendTo(t *testing.T) {
	b, inner, _ := open(t, 1)
	if err := b.SendTo(probe(20), pathC.Addr); err != nil {
		t.Fatal(err)
	}
	if sent := inner.Sent(); len(sent) != 1 || sent[0].Addr != pathC.Addr || len(sent[0].Pkt) != 20 {
		t.Fatalf("sent %+v", sent)
	}
	inner.SendErr = errors.New("boom")
	if err := b.SendTo(probe(20), pathC.Addr); err == nil {
		t.Fatal("inner error lost")
	}
}

// TestConcurrentControlAndData runs sends, receives and path changes at once;
// it fails under -race if the hot path reads anything unsynchronised.
func TestConcurrentControlAndData(t *testing.T) {
	b, inner, fn := open(t, 4)
	b.SetPeer("b", []Path{pathA, pathB})
	ep := peerEP(t, b, "b")
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range 2000 {
			b.Send([][]byte{wgMessage(msgInitiation, uint32(i%20), sizeInitiation)}, ep)
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 2000 {
			b.SetActive("b", i%2)
			if i%100 == 0 {
				b.SetPeer("b", []Path{pathB, pathA, pathC})
				ep.ClearSrc()
			}
			b.RxStats("b")
			b.Active("b")
		}
	}()
	go func() {
		defer wg.Done()
		bufs := [][]byte{make([]byte, 64), make([]byte, 64), make([]byte, 64), make([]byte, 64)}
		for i := range 500 {
			inner.Inject(wgMessage(msgTransport, uint32(i%20), 32), pathA.Addr)
			fn(bufs, make([]int, 4), make([]conn.Endpoint, 4))
		}
	}()
	wg.Wait()
	for _, d := range inner.Sent() {
		if d.Addr != pathA.Addr && d.Addr != pathB.Addr {
			t.Fatalf("sent to %v, not one of the paths", d.Addr)
		}
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	b := New(nopBind{})
	b.SetPeer("b", []Path{pathA, pathB})
	ep := peerEP(t, b, "b")
	b.Send([][]byte{wgMessage(msgInitiation, 5, sizeInitiation)}, ep)
	data := [][]byte{wgMessage(msgTransport, 5, 128)}
	if a := testing.AllocsPerRun(100, func() { b.Send(data, ep) }); a != 0 {
		t.Errorf("Send allocates %.1f per call", a)
	}
	src := &conn.StdNetEndpoint{AddrPort: pathA.Addr}
	bufs := [][]byte{wgMessage(msgTransport, 5, 128), probe(40)}
	sizes := []int{128, 40}
	eps := []conn.Endpoint{src, src}
	b.SetProbeHandler(func([]byte, netip.AddrPort, *Outbox) {})
	var out Outbox
	b.inspect(bufs, sizes, eps, &out) // first sight of src allocates its counter
	if a := testing.AllocsPerRun(100, func() {
		sizes[0], sizes[1] = 128, 40
		b.inspect(bufs, sizes, eps, &out)
	}); a != 0 {
		t.Errorf("receive inspection allocates %.1f per batch", a)
	}
}

// nopBind is an inner bind that does nothing, for measuring our overhead.
type nopBind struct{}

func (nopBind) Open(uint16) ([]conn.ReceiveFunc, uint16, error) { return nil, 0, nil }
func (nopBind) Close() error                                    { return nil }
func (nopBind) SetMark(uint32) error                            { return nil }
func (nopBind) Send([][]byte, conn.Endpoint) error              { return nil }
func (nopBind) BatchSize() int                                  { return conn.IdealBatchSize }
func (nopBind) ParseEndpoint(s string) (conn.Endpoint, error) {
	ap, err := netip.ParseAddrPort(s)
	return &conn.StdNetEndpoint{AddrPort: ap}, err
}

// nopTUN is a tun.Device that accepts every Write.
type nopTUN struct{ tun.Device }

func (nopTUN) Write(bufs [][]byte, _ int) (int, error) { return len(bufs), nil }
