package linkem

import (
	"math/rand/v2"
	"net/netip"
	"time"
)

// maxQueue bounds each direction's delay line. At the demo's rates (a few
// thousand packets per second, tens of milliseconds of delay) the line holds
// a few hundred packets; beyond this the link drops, like a full router queue.
const maxQueue = 4096

// maxDatagram is the largest datagram a link forwards.
const maxDatagram = 65535

// item is one datagram waiting in a delay line.
type item struct {
	due  time.Time
	pkt  []byte
	dst  netip.AddrPort // where to send it
	from *client        // which upstream socket (toward target) or nil (toward client)
}

// line is the pure part of a direction: it decides, given the configuration
// and an arrival time, whether a datagram is dropped and when it is due.
// It keeps FIFO order: due times never decrease.
type line struct {
	rng     *rand.Rand
	lastDue time.Time
}

func newLine(seed int64, dir uint64) *line {
	return &line{rng: rand.New(rand.NewPCG(uint64(seed), dir))}
}

// admit returns whether the datagram survives the loss draw and, if it does,
// its due time. With Loss == 0 and Jitter == 0 it draws no random numbers, so
// a seeded sequence of decisions depends only on the packets that were
// subject to loss or jitter.
func (ln *line) admit(cfg Config, now time.Time) (time.Time, bool) {
	if cfg.Loss > 0 && ln.rng.Float64() < cfg.Loss {
		return time.Time{}, false
	}
	d := cfg.Delay
	if cfg.Jitter > 0 {
		d += time.Duration(ln.rng.Int64N(int64(2*cfg.Jitter)+1)) - cfg.Jitter
		if d < 0 {
			d = 0
		}
	}
	due := now.Add(d)
	if due.Before(ln.lastDue) {
		due = ln.lastDue
	}
	ln.lastDue = due
	return due, true
}

// queue is a bounded FIFO of items. Because due times are non-decreasing it
// doubles as the direction's timer heap: the head is always the earliest.
type queue struct {
	buf        []item
	head, size int
}

func newQueue(n int) *queue { return &queue{buf: make([]item, n)} }

func (q *queue) push(it item) bool {
	if q.size == len(q.buf) {
		return false
	}
	q.buf[(q.head+q.size)%len(q.buf)] = it
	q.size++
	return true
}

func (q *queue) peek() (item, bool) {
	if q.size == 0 {
		return item{}, false
	}
	return q.buf[q.head], true
}

func (q *queue) pop() item {
	it := q.buf[q.head]
	q.buf[q.head] = item{}
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return it
}
