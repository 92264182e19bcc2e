package udpbind

import (
	"bytes"
	"fmt"
	"math/rand"
	"net/netip"
	"testing"

	"golang.zx2c4.com/wireguard/conn"
)

type segment struct {
	data []byte
	ep   *Endpoint
}

// TestExpandProperties feeds expand random batches of messages, some
// coalesced, as recvmmsg would leave them in the caller's buffers, and
// checks that the datagrams handed out (by expand, then by the stash over
// the next calls) are exactly the messages' segments, in order, each with
// its message's endpoint: none lost, none overwritten, none twice.
func TestExpandProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const bufSize = 1 << 16
	for iter := range 500 {
		nbufs := 1 + rng.Intn(batchSize)
		r := newReceiver(nil, batchSize)
		bufs := make([][]byte, nbufs)
		for i := range bufs {
			bufs[i] = make([]byte, bufSize)
		}
		n := 1 + rng.Intn(nbufs)
		var want []segment
		for i := range n {
			gso := 0
			size := rng.Intn(1400)
			if rng.Intn(2) == 0 {
				gso = 1 + rng.Intn(1400)
				size = gso*rng.Intn(min(maxSegments, 64000/gso)) + rng.Intn(gso+1)
			}
			for j := range size {
				bufs[i][j] = byte(rng.Intn(256))
			}
			ep := &Endpoint{Dst: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), uint16(iter))}
			r.hdrs[i].Len = uint32(size)
			r.meta[i] = received{gso: gso}
			r.eps[i] = ep
			segs := segments(size, gso)
			for s := range segs {
				start, end := 0, size
				if segs > 1 {
					start, end = s*gso, min((s+1)*gso, size)
				}
				want = append(want, segment{append([]byte(nil), bufs[i][start:end]...), ep})
			}
		}
		sizes := make([]int, nbufs)
		eps := make([]conn.Endpoint, nbufs)
		var got []segment
		take := func(k int) {
			for i := range k {
				got = append(got, segment{append([]byte(nil), bufs[i][:sizes[i]]...), eps[i].(*Endpoint)})
			}
		}
		k := 0
		if total := len(want); total == n {
			k = n // nothing coalesced: receive hands the batch out as it is
			for i := range n {
				sizes[i], eps[i] = int(r.hdrs[i].Len), r.eps[i]
			}
		} else {
			k = r.expand(n, bufs, sizes, eps)
		}
		if k == 0 {
			t.Fatalf("iter %d: expand handed out nothing", iter)
		}
		take(k)
		for calls := 0; len(r.stash) > 0; calls++ {
			if calls > len(want) {
				t.Fatalf("iter %d: the stash does not drain", iter)
			}
			for i := range bufs {
				clear(bufs[i][:64]) // the caller reuses its buffers
			}
			take(r.fromStash(bufs, sizes, eps))
		}
		if err := sameSegments(got, want); err != nil {
			t.Fatalf("iter %d (%d buffers, %d messages): %v", iter, nbufs, n, err)
		}
	}
}

func sameSegments(got, want []segment) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d datagrams handed out, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].data, want[i].data) {
			return fmt.Errorf("datagram %d: %d bytes differ from the %d expected", i, len(got[i].data), len(want[i].data))
		}
		if got[i].ep != want[i].ep {
			return fmt.Errorf("datagram %d: endpoint %v, want %v", i, got[i].ep.Dst, want[i].ep.Dst)
		}
	}
	return nil
}
