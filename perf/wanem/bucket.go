package wanem

import "time"

// Frame sizes for the limiter's minimum depth: an Ethernet frame of 1500
// bytes of payload plus its 14-byte header.
const maxFrame = 1514

// bucket is a token bucket in bytes that may go into debt: a frame that
// finds too few tokens takes them anyway and waits until the debt is paid
// back at the rate. Frames therefore leave in arrival order, spaced at the
// rate, and the debt is the backlog of a FIFO queue in front of a link of
// that rate.
type bucket struct {
	rate   float64 // bytes per second; 0 is unlimited
	depth  float64 // bytes
	tokens float64
	last   time.Time
}

// setRate changes the rate, keeping the tokens (and any debt) already
// accrued. The depth is one millisecond at the rate, at least two full
// frames: enough that back-to-back frames of a paced sender pass without
// waiting, small enough that bursts are shaped.
func (b *bucket) setRate(r Rate, now time.Time) {
	if !b.last.IsZero() {
		b.refill(now)
	}
	b.rate = float64(r) / 8
	b.depth = max(2*maxFrame, b.rate/1000)
	if b.last.IsZero() {
		b.last, b.tokens = now, b.depth
	}
	if b.tokens > b.depth {
		b.tokens = b.depth
	}
}

func (b *bucket) refill(now time.Time) {
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.depth, b.tokens+b.rate*el.Seconds())
		b.last = now
	}
}

// take asks for size bytes at now. It returns how long the frame waits
// before it leaves, or ok=false, taking nothing, if that wait would exceed
// maxWait (the queue is full).
func (b *bucket) take(now time.Time, size int, maxWait time.Duration) (wait time.Duration, ok bool) {
	if b.rate == 0 {
		return 0, true
	}
	b.refill(now)
	after := b.tokens - float64(size)
	if after >= 0 {
		b.tokens = after
		return 0, true
	}
	wait = time.Duration(-after / b.rate * float64(time.Second))
	if wait > maxWait {
		return 0, false
	}
	b.tokens = after
	return wait, true
}
