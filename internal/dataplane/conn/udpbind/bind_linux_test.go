package udpbind

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/conn"
)

// opened is a Bind open on a free port of loopback, closed at the end.
type opened struct {
	b    *Bind
	fns  []conn.ReceiveFunc
	port uint16
}

func open(t *testing.T) *opened {
	t.Helper()
	b := New().(*Bind)
	fns, port, err := b.Open(0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &opened{b: b, fns: fns, port: port}
}

func (o *opened) addr4() netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), o.port)
}

// datagram is one received datagram.
type datagram struct {
	data []byte
	ep   *Endpoint
}

// receive reads on the IPv4 receive function, with nbufs buffers per
// call, until it has want datagrams or the deadline passes. A read that
// blocks past the deadline is ended by closing the bind.
func (o *opened) receive(t *testing.T, want, nbufs int) []datagram {
	t.Helper()
	bufs := make([][]byte, nbufs)
	for i := range bufs {
		bufs[i] = make([]byte, 1<<16)
	}
	sizes := make([]int, nbufs)
	eps := make([]conn.Endpoint, nbufs)
	var got []datagram
	timer := time.AfterFunc(10*time.Second, func() { _ = o.b.Close() })
	defer timer.Stop()
	for len(got) < want {
		n, err := o.fns[0](bufs, sizes, eps)
		if err != nil {
			t.Fatalf("receiving (%d of %d datagrams so far): %v", len(got), want, err)
		}
		for i := range n {
			got = append(got, datagram{append([]byte(nil), bufs[i][:sizes[i]]...), eps[i].(*Endpoint)})
		}
	}
	return got
}

func packets(n, size, last int, tag byte) [][]byte {
	var out [][]byte
	for i := range n {
		l := size
		if i == n-1 {
			l = last
		}
		p := make([]byte, l)
		for j := range p {
			p[j] = tag + byte(i) + byte(j)
		}
		out = append(out, p)
	}
	return out
}

// TestSendReceiveGSOGRO sends a run of equal datagrams with a short last
// one in one Send (one GSO message where the kernel takes it; over
// loopback to a GRO socket it arrives coalesced) and checks that the
// receiver hands out each datagram as sent, with the sender's address and
// the local address it arrived at, including when the receive has fewer
// buffers than the run has datagrams (the rest is stashed).
func TestSendReceiveGSOGRO(t *testing.T) {
	for _, nbufs := range []int{batchSize, 5} {
		a, b := open(t), open(t)
		want := packets(40, 1200, 700, byte(nbufs))
		if err := a.b.Send(want, NewEndpoint(b.addr4())); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := b.receive(t, len(want), nbufs)
		if len(got) != len(want) {
			t.Fatalf("%d buffers: received %d datagrams, want %d", nbufs, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].data, want[i]) {
				t.Fatalf("%d buffers: datagram %d: %d bytes, not what was sent (%d bytes)", nbufs, i, len(got[i].data), len(want[i]))
			}
			if got[i].ep.Dst != a.addr4() || got[i].ep.SrcIP() != netip.MustParseAddr("127.0.0.1") {
				t.Fatalf("datagram %d: from %v to %v, want from %v to 127.0.0.1", i, got[i].ep.Dst, got[i].ep.SrcIP(), a.addr4())
			}
		}
	}
}

// TestSendMoreThanABatch: a Send of more buffers than the bind's batch
// goes out in chunks, every datagram in order.
func TestSendMoreThanABatch(t *testing.T) {
	a, b := open(t), open(t)
	want := packets(batchSize+72, 100, 100, 3)
	if err := a.b.Send(want, NewEndpoint(b.addr4())); err != nil {
		t.Fatalf("Send of %d buffers: %v", len(want), err)
	}
	got := b.receive(t, len(want), batchSize)
	for i := range want {
		if !bytes.Equal(got[i].data, want[i]) {
			t.Fatalf("datagram %d is not what was sent", i)
		}
	}
}

// TestStickyReply answers a datagram through the endpoint it came from:
// the answer leaves from the address the datagram arrived at (here
// 127.0.0.2, not the 127.0.0.1 routing would pick for the sender's
// 127.0.0.1).
func TestStickyReply(t *testing.T) {
	a, b := open(t), open(t)
	to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), b.port)
	if err := a.b.Send([][]byte{[]byte("ping")}, NewEndpoint(to)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := b.receive(t, 1, batchSize)
	if got[0].ep.SrcIP() != to.Addr() {
		t.Fatalf("arrived at %v, want %v", got[0].ep.SrcIP(), to.Addr())
	}
	if err := b.b.Send([][]byte{[]byte("pong")}, got[0].ep); err != nil {
		t.Fatalf("Send back: %v", err)
	}
	back := a.receive(t, 1, batchSize)
	if string(back[0].data) != "pong" || back[0].ep.Dst != to {
		t.Fatalf("answer %q from %v, want \"pong\" from %v", back[0].data, back[0].ep.Dst, to)
	}
	got[0].ep.ClearSrc()
	if got[0].ep.SrcIP().IsValid() {
		t.Fatal("ClearSrc left a source")
	}
}

// TestSendBatchManyDestinations sends to two binds in one batch with a
// destination the kernel refuses (port 0) in the
// middle: the others still arrive, in order, and the error is returned.
func TestSendBatchManyDestinations(t *testing.T) {
	a, b, c := open(t), open(t), open(t)
	bad := netip.MustParseAddrPort("127.0.0.1:0") // port 0: EINVAL
	var pkts [][]byte
	var dsts []netip.AddrPort
	for i := range 300 { // more than one batch of headers
		pkts = append(pkts, []byte{byte(i), byte(i >> 8)})
		switch {
		case i == 150:
			dsts = append(dsts, bad)
		case i%2 == 0:
			dsts = append(dsts, b.addr4())
		default:
			dsts = append(dsts, netip.AddrPortFrom(netip.MustParseAddr("::ffff:127.0.0.1"), c.port))
		}
	}
	err := a.b.SendBatch(pkts, dsts)
	if err == nil || !strings.Contains(err.Error(), bad.String()) {
		t.Fatalf("SendBatch with a destination of port 0: error %v, want one naming %v", err, bad)
	}
	gotB := b.receive(t, 149, batchSize) // the even ones but 150
	gotC := c.receive(t, 150, batchSize) // the odd ones, to an IPv4-mapped address
	for _, got := range [][]datagram{gotB, gotC} {
		prev := -1
		for _, d := range got {
			i := int(d.data[0]) | int(d.data[1])<<8
			if i <= prev || i == 150 {
				t.Fatalf("datagram %d after %d", i, prev)
			}
			prev = i
		}
	}
	if err := a.b.SendBatch(pkts[:2], dsts[:1]); err == nil {
		t.Fatal("SendBatch with fewer destinations than packets: no error")
	}
}

func TestCloseEndsReceive(t *testing.T) {
	a := open(t)
	done := make(chan error, 1)
	go func() {
		bufs := [][]byte{make([]byte, 1500)}
		_, err := a.fns[0](bufs, make([]int, 1), make([]conn.Endpoint, 1))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // real: lets the receive block in the kernel (the test holds either way)
	if err := a.b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("receive after Close: %v, want net.ErrClosed", err)
	}
	if err := a.b.Send([][]byte{{1}}, NewEndpoint(a.addr4())); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Send after Close: %v, want net.ErrClosed", err)
	}
	if _, _, err := a.b.Open(0); err != nil {
		t.Fatalf("reopening: %v", err)
	}
}

func TestOpenTwiceAndEndpoints(t *testing.T) {
	a := open(t)
	if _, _, err := a.b.Open(0); !errors.Is(err, conn.ErrBindAlreadyOpen) {
		t.Fatalf("second Open: %v, want ErrBindAlreadyOpen", err)
	}
	ep, err := a.b.ParseEndpoint("[::ffff:10.0.0.1]:51820")
	if err != nil {
		t.Fatal(err)
	}
	if ep.DstToString() != "10.0.0.1:51820" || ep.DstIP().Is6() {
		t.Fatalf("mapped endpoint parsed as %v", ep.DstToString())
	}
	if _, err := a.b.ParseEndpoint("10.0.0.1"); err == nil {
		t.Fatal("ParseEndpoint without a port: no error")
	}
	if err := a.b.SetMark(0); errors.Is(err, syscall.EPERM) {
		t.Skipf("SO_MARK needs root (CAP_NET_ADMIN): %v", err)
	} else if err != nil {
		t.Fatalf("SetMark: %v", err)
	}
}
