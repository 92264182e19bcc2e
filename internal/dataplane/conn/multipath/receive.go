package multipath

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"

	"golang.zx2c4.com/wireguard/conn"
)

// wrapReceive wraps one of the inner bind's receive functions: after each
// batch it diverts probes to the probe handler (setting their size to 0,
// which wireguard-go skips) and marks transport data with its source, to be
// credited once WireGuard has authenticated it (authrx.go). It allocates
// nothing per packet.
func (b *Bind) wrapReceive(fn conn.ReceiveFunc) conn.ReceiveFunc {
	// The answers of one batch, sent together after it; only this
	// function's goroutine uses it.
	var out Outbox
	return func(bufs [][]byte, sizes []int, eps []conn.Endpoint) (int, error) {
		n, err := fn(bufs, sizes, eps)
		if err != nil {
			if b.closed.Load() && !errors.Is(err, net.ErrClosed) {
				err = net.ErrClosed
			}
			return n, err
		}
		b.inspect(bufs[:n], sizes[:n], eps[:n], &out)
		_ = b.Flush(&out) // answers are best effort, as the probes they answer
		return n, nil
	}
}

// inspect handles one received batch in place; the probe handler's
// answers go to out.
func (b *Bind) inspect(bufs [][]byte, sizes []int, eps []conn.Endpoint, out *Outbox) {
	isProbe := *b.isProbe.Load()
	handler := b.probe.Load()
	var index map[uint32]*peer
	var now int64
	for i, size := range sizes {
		if size <= 0 {
			continue
		}
		pkt := bufs[i][:size]
		if isTransport(pkt) {
			src := addrOf(eps[i])
			if sampled(binary.LittleEndian.Uint64(pkt[offCounter:])) {
				if index == nil {
					if m := b.index.Load(); m != nil {
						index = *m
					}
					now = b.nanos()
				}
				if b.creditCopy(index, pkt, src, now) {
					sizes[i] = 0 // a copy of a delivered message: WireGuard would drop it as a replay
					continue
				}
			}
			if !mark(bufs[i], size, src, b.secret) {
				sizes[i] = 0 // no room for the mark: see authrx.go
			}
			continue
		}
		if isProbe(pkt) {
			if handler != nil {
				(*handler)(pkt, addrOf(eps[i]), out)
			}
			sizes[i] = 0
		}
	}
}

// runCount accumulates data messages for one peer and source, received at
// now (Bind.nanos).
type runCount struct {
	p              *peer
	addr           netip.AddrPort
	packets, bytes uint64
	now            int64
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
		r.p.count(r.addr, r.packets, r.bytes, r.now)
	}
	r.packets, r.bytes = 0, 0
}
