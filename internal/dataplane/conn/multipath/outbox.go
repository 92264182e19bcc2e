package multipath

import "net/netip"

// BatchSender is an inner bind that sends datagrams to many destinations
// in one call (udpbind: one sendmmsg). Without it, Flush sends them one by
// one.
type BatchSender interface {
	SendBatch(pkts [][]byte, dsts []netip.AddrPort) error
}

// Outbox collects small datagrams (probes and their answers) to send
// together: the probes due in one step of the owner goroutine, the answers
// to the requests of one received batch. One goroutine owns each outbox;
// the zero value is ready to use, and it keeps its memory between uses.
type Outbox struct {
	data []byte
	ends []int
	dsts []netip.AddrPort
	pkts [][]byte
}

// Add copies pkt, to be sent to to at the next Flush.
func (o *Outbox) Add(pkt []byte, to netip.AddrPort) {
	o.data = append(o.data, pkt...)
	o.ends = append(o.ends, len(o.data))
	o.dsts = append(o.dsts, to)
}

// Drain hands each waiting datagram to f, in order, and empties o: what a
// fake transport does instead of Flush. pkt is valid only during the call.
func (o *Outbox) Drain(f func(pkt []byte, to netip.AddrPort)) {
	start := 0
	for i, end := range o.ends {
		f(o.data[start:end:end], o.dsts[i])
		start = end
	}
	o.reset()
}

// Len is the number of datagrams waiting.
func (o *Outbox) Len() int { return len(o.ends) }

func (o *Outbox) reset() {
	o.data, o.ends, o.dsts = o.data[:0], o.ends[:0], o.dsts[:0]
	clear(o.pkts)
	o.pkts = o.pkts[:0]
}

// Flush sends what o holds and empties it: in one batch where the inner
// bind can, else one datagram at a time. Every datagram is tried; the
// first error is returned.
func (b *Bind) Flush(o *Outbox) error {
	if o.Len() == 0 {
		return nil
	}
	defer o.reset()
	if b.closed.Load() {
		return errClosed
	}
	start := 0
	for _, end := range o.ends {
		o.pkts = append(o.pkts, o.data[start:end:end])
		start = end
	}
	if bs, ok := b.inner.(BatchSender); ok {
		return bs.SendBatch(o.pkts, o.dsts)
	}
	var first error
	for i, pkt := range o.pkts {
		if err := b.sendOne(pkt, o.dsts[i]); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// sendOne sends one datagram through the inner bind.
func (b *Bind) sendOne(pkt []byte, to netip.AddrPort) error {
	ep, err := b.endpointTo(to)
	if err == nil {
		err = b.inner.Send([][]byte{pkt}, ep)
	}
	return err
}
