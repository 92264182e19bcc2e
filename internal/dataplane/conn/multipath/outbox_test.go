package multipath

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/liqo-relay/relay/internal/dataplane/conn/conntest"
)

// TestAnswersGoOutAfterTheBatch: what the probe handler adds to its
// outbox is sent once the received batch has been looked at, to the
// addresses given, in order.
func TestAnswersGoOutAfterTheBatch(t *testing.T) {
	b, inner, fn := open(t, 4)
	b.SetProbeHandler(func(pkt []byte, from netip.AddrPort, out *Outbox) {
		out.Add(append([]byte("re:"), pkt[1]), from)
	})
	froms := []netip.AddrPort{
		netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:2"), netip.MustParseAddrPort("[2001:db8::3]:3"),
	}
	for i, from := range froms {
		p := probe(40)
		p[1] = byte(i)
		if err := inner.Inject(p, from); err != nil {
			t.Fatal(err)
		}
	}
	receive(t, fn, 4)
	sent := inner.Sent()
	if len(sent) != len(froms) {
		t.Fatalf("%d answers sent, want %d", len(sent), len(froms))
	}
	for i, d := range sent {
		if d.Addr != froms[i] || !bytes.Equal(d.Pkt, []byte{'r', 'e', ':', byte(i)}) {
			t.Fatalf("answer %d: %q to %v, want %q to %v", i, d.Pkt, d.Addr, []byte{'r', 'e', ':', byte(i)}, froms[i])
		}
	}
}

// batchInner is an inner bind that sends batches, recording each call.
type batchInner struct {
	*conntest.Bind
	calls [][]netip.AddrPort
	pkts  [][]byte
}

func (b *batchInner) SendBatch(pkts [][]byte, dsts []netip.AddrPort) error {
	b.calls = append(b.calls, append([]netip.AddrPort(nil), dsts...))
	for _, p := range pkts {
		b.pkts = append(b.pkts, append([]byte(nil), p...))
	}
	return nil
}

// TestFlushBatchesWhereTheInnerCan: an inner bind with SendBatch gets the
// whole outbox in one call; the outbox is empty after a Flush, also after
// a failed one on a closed bind.
func TestFlushBatchesWhereTheInnerCan(t *testing.T) {
	inner := &batchInner{Bind: conntest.New(4)}
	b := New(inner)
	if _, _, err := b.Open(0); err != nil {
		t.Fatal(err)
	}
	var out Outbox
	var want []netip.AddrPort
	for i := range 5 {
		to := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), 9)
		out.Add([]byte{byte(i), 1, 2}, to)
		want = append(want, to)
	}
	if err := b.Flush(&out); err != nil {
		t.Fatal(err)
	}
	if len(inner.calls) != 1 || len(inner.calls[0]) != 5 {
		t.Fatalf("SendBatch calls %v, want one with 5 destinations", inner.calls)
	}
	for i := range want {
		if inner.calls[0][i] != want[i] || !bytes.Equal(inner.pkts[i], []byte{byte(i), 1, 2}) {
			t.Fatalf("datagram %d: %v to %v", i, inner.pkts[i], inner.calls[0][i])
		}
	}
	if out.Len() != 0 {
		t.Fatalf("outbox holds %d after Flush", out.Len())
	}
	if err := b.Flush(&out); err != nil || len(inner.calls) != 1 {
		t.Fatalf("empty Flush: err %v, %d calls", err, len(inner.calls))
	}
	_ = b.Close()
	out.Add([]byte{1}, want[0])
	if err := b.Flush(&out); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Flush on a closed bind: %v, want net.ErrClosed", err)
	}
	if out.Len() != 0 || len(inner.calls) != 1 {
		t.Fatalf("closed bind: outbox holds %d, %d calls", out.Len(), len(inner.calls))
	}
}
