// Package tuntest provides an in-memory pair of tun.Device ends wired back to
// back: whatever one end writes, the other end reads. It is the fake beside
// internal/dataplane/tun's real devices, for tests that need packets to flow without a
// kernel interface or WireGuard.
package tuntest

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.zx2c4.com/wireguard/tun"
)

// queueLen is how many packets may sit in one direction before Write blocks.
// It is deep enough for a bulk TCP window of full-size segments, so that the
// pair adds backpressure rather than loss.
const queueLen = 1024

// batchSize is the most packets one Read returns and what BatchSize reports.
const batchSize = 128

// Device is one end of an in-memory pair. It is safe for concurrent use.
//
// Contract, as for wireguard-go's devices: after Close, Read and Write return
// os.ErrClosed and the Events channel is closed. Writes while the other end is
// closed are dropped silently, like packets sent into an unplugged cable.
type Device struct {
	mtu    int
	rx     chan []byte // packets this end reads
	peer   *Device
	events chan tun.Event

	closeOnce sync.Once
	closed    chan struct{}
}

var _ tun.Device = (*Device)(nil)

// NewPair returns two devices wired back to back with the given MTU. Each
// reports tun.EventUp once.
func NewPair(mtu int) (a, b *Device) {
	a, b = newDevice(mtu), newDevice(mtu)
	a.peer, b.peer = b, a
	return a, b
}

func newDevice(mtu int) *Device {
	d := &Device{
		mtu:    mtu,
		rx:     make(chan []byte, queueLen),
		events: make(chan tun.Event, 1),
		closed: make(chan struct{}),
	}
	d.events <- tun.EventUp
	return d
}

// File returns nil: there is no file descriptor behind an in-memory device.
func (d *Device) File() *os.File { return nil }

// Read blocks until at least one packet is available, then returns as many
// queued packets as fit in bufs, each copied to bufs[i][offset:].
func (d *Device) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	if len(bufs) == 0 {
		return 0, nil
	}
	select {
	case <-d.closed: // checked first: queued packets are not read after Close
		return 0, os.ErrClosed
	default:
	}
	var pkt []byte
	select {
	case <-d.closed:
		return 0, os.ErrClosed
	case pkt = <-d.rx:
	}
	n := 0
	for {
		if len(pkt) > len(bufs[n])-offset {
			return n, fmt.Errorf("tuntest: packet of %d bytes into buffer of %d: %w", len(pkt), len(bufs[n])-offset, io.ErrShortBuffer)
		}
		sizes[n] = copy(bufs[n][offset:], pkt)
		n++
		if n == len(bufs) {
			return n, nil
		}
		select {
		case pkt = <-d.rx:
		default:
			return n, nil
		}
	}
}

// Write copies each bufs[i][offset:] to the other end's queue, blocking while
// that queue is full. Empty packets are skipped.
func (d *Device) Write(bufs [][]byte, offset int) (int, error) {
	for i, b := range bufs {
		select {
		case <-d.closed:
			return i, os.ErrClosed
		default:
		}
		if len(b) <= offset {
			continue
		}
		if len(b)-offset > d.mtu {
			return i, fmt.Errorf("tuntest: packet of %d bytes exceeds MTU %d", len(b)-offset, d.mtu)
		}
		pkt := append([]byte(nil), b[offset:]...)
		select {
		case d.peer.rx <- pkt:
		case <-d.peer.closed:
			// Dropped: the other end is gone.
		case <-d.closed:
			return i, os.ErrClosed
		}
	}
	return len(bufs), nil
}

// MTU returns the MTU given to NewPair.
func (d *Device) MTU() (int, error) { return d.mtu, nil }

// Name returns "tuntest".
func (d *Device) Name() (string, error) { return "tuntest", nil }

// Events returns the event channel; it carries EventUp once and is closed by
// Close.
func (d *Device) Events() <-chan tun.Event { return d.events }

// BatchSize returns the most packets a Read returns at once.
func (d *Device) BatchSize() int { return batchSize }

// Close closes this end. It is idempotent. The other end stays open; its
// writes are dropped from then on.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		close(d.closed)
		close(d.events)
	})
	return nil
}
