package bind

import (
	"errors"
	"net"
	"net/netip"

	"golang.zx2c4.com/wireguard/conn"
)

// wrapReceive wraps one of the inner bind's receive functions: after each
// batch it diverts probes to the probe handler (setting their size to 0,
// which wireguard-go skips) and counts transport data for the peer whose
// session index it carries. It allocates nothing per packet.
func (b *Bind) wrapReceive(fn conn.ReceiveFunc) conn.ReceiveFunc {
	return func(bufs [][]byte, sizes []int, eps []conn.Endpoint) (int, error) {
		n, err := fn(bufs, sizes, eps)
		if err != nil {
			if b.closed.Load() && !errors.Is(err, net.ErrClosed) {
				err = net.ErrClosed
			}
			return n, err
		}
		b.inspect(bufs[:n], sizes[:n], eps[:n])
		return n, nil
	}
}

// inspect handles one received batch in place. Consecutive data messages
// of the same session from the same source (the common case in a GRO batch)
// are counted together, so the counters are touched once per run.
func (b *Bind) inspect(bufs [][]byte, sizes []int, eps []conn.Endpoint) {
	isProbe := *b.isProbe.Load()
	handler := b.probe.Load()
	var index map[uint32]*peer
	if m := b.index.Load(); m != nil {
		index = *m
	}
	var (
		run      runCount
		lastIdx  uint32
		lastPeer *peer
		haveIdx  bool
	)
	for i, size := range sizes {
		if size <= 0 {
			continue
		}
		pkt := bufs[i][:size]
		if idx, ok := transportReceiverIndex(pkt); ok {
			if !haveIdx || idx != lastIdx {
				lastIdx, lastPeer, haveIdx = idx, index[idx], true
			}
			if lastPeer != nil {
				run.add(lastPeer, addrOf(eps[i]), size)
			}
			continue
		}
		if isProbe(pkt) {
			if handler != nil {
				(*handler)(pkt, addrOf(eps[i]))
			}
			sizes[i] = 0
		}
	}
	run.flush()
}

// runCount accumulates data messages for one peer and source.
type runCount struct {
	p              *peer
	addr           netip.AddrPort
	packets, bytes uint64
}

func (r *runCount) add(p *peer, addr netip.AddrPort, size int) {
	if p != r.p || addr != r.addr {
		r.flush()
		r.p, r.addr = p, addr
	}
	r.packets++
	r.bytes += uint64(size)
}

func (r *runCount) flush() {
	if r.p != nil && r.packets > 0 {
		r.p.count(r.addr, r.packets, r.bytes)
	}
	r.packets, r.bytes = 0, 0
}
