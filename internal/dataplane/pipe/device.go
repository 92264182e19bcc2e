package pipe

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.zx2c4.com/wireguard/tun"

	"github.com/liqo-relay/relay/internal/core/packet"
)

// Device wraps a tun.Device and filters and rewrites the packets crossing
// it. Read is the local side towards WireGuard (outbound); Write is
// WireGuard towards the local side (inbound). Until SetRules is called with
// non-nil rules every packet is dropped. All other methods pass through; Close
// closes the inner device.
//
// Read and Write may be called concurrently (wireguard-go writes from one
// goroutine per peer); rules are read once per batch.
type Device struct {
	inner   tun.Device
	rules   atomic.Pointer[Compiled]
	cnt     counters
	scratch sync.Pool // *[][]byte, for Write batches with drops
}

var _ tun.Device = (*Device)(nil)

// Wrap returns a Device around dev, dropping everything until SetRules.
func Wrap(dev tun.Device) *Device {
	return &Device{inner: dev}
}

// SetRules atomically replaces the rules; nil drops every packet. Batches
// already in flight finish with the rules they started with.
func (d *Device) SetRules(c *Compiled) { d.rules.Store(c) }

// Rules returns the rules in force (nil if none).
func (d *Device) Rules() *Compiled { return d.rules.Load() }

// Read reads a batch from the inner device and applies, to each packet:
// (1) an ICMP error from a source outside Local gets the relay's address as
// source; (2) a source outside Local is dropped; (3) the packet is
// translated for the peer its destination routes to; (4) TCP MSS is clamped.
// Dropped packets are compacted out: surviving packets are copied down so
// that bufs[:n] and sizes[:n] hold them in order (buffers are copied, never
// swapped, since callers tie each buffer to their own bookkeeping).
func (d *Device) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	n, err := d.inner.Read(bufs, sizes, offset)
	if n <= 0 {
		return n, err
	}
	c := d.rules.Load()
	var b batch
	j := 0
	for i := 0; i < n; i++ {
		pkt := bufs[i][offset : offset+sizes[i]]
		if !c.outbound(pkt, &b) {
			continue
		}
		if j != i {
			copy(bufs[j][offset:], pkt)
			sizes[j] = sizes[i]
		}
		j++
	}
	d.cnt.add(&b)
	return j, err
}

// Write applies, to each packet: (1) the packet is translated for the peer
// its source belongs to; (2) a destination outside Local is dropped; (3)
// TCP MSS is clamped; and writes the survivors to the inner device. Dropped
// packets count as written in the returned count. The caller's bufs slice
// is not reordered.
func (d *Device) Write(bufs [][]byte, offset int) (int, error) {
	c := d.rules.Load()
	var b batch
	keep := bufs
	var sp *[][]byte
	for i, buf := range bufs {
		if len(buf) < offset {
			b.malformed++
		} else if c.inbound(buf[offset:], &b) {
			if sp != nil {
				*sp = append(*sp, buf)
			}
			continue
		}
		if sp == nil {
			// First drop: from here on collect the survivors aside.
			sp = d.getScratch()
			*sp = append(*sp, bufs[:i]...)
		}
	}
	d.cnt.add(&b)
	dropped := 0
	if sp != nil {
		keep = *sp
		dropped = len(bufs) - len(keep)
		defer d.putScratch(sp)
	}
	if len(keep) == 0 {
		return dropped, nil
	}
	n, err := d.inner.Write(keep, offset)
	return n + dropped, err
}

func (d *Device) getScratch() *[][]byte {
	if sp, ok := d.scratch.Get().(*[][]byte); ok {
		return sp
	}
	s := make([][]byte, 0, 128)
	return &s
}

func (d *Device) putScratch(sp *[][]byte) {
	clear(*sp) // do not pin the caller's buffers
	*sp = (*sp)[:0]
	d.scratch.Put(sp)
}

// outbound applies the Read rules to one packet; false = drop.
func (c *Compiled) outbound(pkt []byte, b *batch) bool {
	if c == nil {
		b.noRules++
		return false
	}
	var h packet.Header
	if err := h.Parse(pkt); err != nil {
		b.malformed++
		return false
	}
	if packet.RewriteForeignICMPSourceParsed(pkt, &h, c.local, c.relay4, c.relay6) {
		b.icmpRewritten++
	}
	if !c.local.ContainsBytes(h.Src(pkt)) {
		b.badSource++
		return false
	}
	if peer, ok := c.table.LookupBytes(h.Dst(pkt)); ok {
		if tr := c.peers[peer].tr; tr != nil {
			changed, err := tr.OutboundParsed(pkt, &h)
			if err != nil {
				b.malformed++
				return false
			}
			if changed {
				b.translatedTX++
			}
		}
	}
	if c.mss4 > 0 && packet.ClampMSSParsed(pkt, &h, c.mss4, c.mss6) {
		b.clamped++
	}
	return true
}

// inbound applies the Write rules to one packet; false = drop.
func (c *Compiled) inbound(pkt []byte, b *batch) bool {
	if c == nil {
		b.noRules++
		return false
	}
	var h packet.Header
	if err := h.Parse(pkt); err != nil {
		b.malformed++
		return false
	}
	if peer, ok := c.table.LookupBytes(h.Src(pkt)); ok {
		if tr := c.peers[peer].tr; tr != nil {
			changed, err := tr.InboundParsed(pkt, &h)
			if err != nil {
				b.malformed++
				return false
			}
			if changed {
				b.translatedRX++
			}
		}
	}
	if !c.local.ContainsBytes(h.Dst(pkt)) {
		b.badDest++
		return false
	}
	if c.mss4 > 0 && packet.ClampMSSParsed(pkt, &h, c.mss4, c.mss6) {
		b.clamped++
	}
	return true
}

// File returns the inner device's file.
func (d *Device) File() *os.File { return d.inner.File() }

// MTU returns the inner device's MTU.
func (d *Device) MTU() (int, error) { return d.inner.MTU() }

// Name returns the inner device's name.
func (d *Device) Name() (string, error) { return d.inner.Name() }

// Events returns the inner device's events.
func (d *Device) Events() <-chan tun.Event { return d.inner.Events() }

// Close closes the inner device.
func (d *Device) Close() error { return d.inner.Close() }

// BatchSize returns the inner device's batch size.
func (d *Device) BatchSize() int { return d.inner.BatchSize() }
