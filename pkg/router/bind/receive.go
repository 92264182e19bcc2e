package bind

import (
	"errors"
	"net"

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

// inspect handles one received batch in place.
func (b *Bind) inspect(bufs [][]byte, sizes []int, eps []conn.Endpoint) {
	isProbe := *b.isProbe.Load()
	handler := b.probe.Load()
	var index map[uint32]*peer
	if m := b.index.Load(); m != nil {
		index = *m
	}
	for i, size := range sizes {
		if size <= 0 {
			continue
		}
		pkt := bufs[i][:size]
		if idx, ok := transportReceiverIndex(pkt); ok {
			if p := index[idx]; p != nil {
				p.count(addrOf(eps[i]), size)
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
}
