package bridge

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/perf/wanem"
)

// pump is one direction: frames read from in, admitted by dir, queued
// until due, written to out.
type pump struct {
	name    string
	in, out *port
	wake    chan struct{} // the queue went from empty to not empty

	mu      sync.Mutex // guards dir, q and the counters below
	dir     *wanem.Direction
	q       *wanem.Queue
	scratch []byte // read target while the queue is full

	queueFull, oversize, readErrs, writeErrs uint64
	maxQueue                                 int
	late                                     uint64        // frames written more than lateBound after due
	maxLate                                  time.Duration // the latest of them
}

// lateBound: a frame written later than this after its due time counts as
// late (Stats.Late): the emulator itself was starved of CPU, and the link
// did not deliver as emulated. 5 ms is a quarter of the 20 ms probe
// interval the aggressive-timer scenario runs (perf/scenarios/timers.sh).
const lateBound = 5 * time.Millisecond

func newPump(name string, in, out *port, rng *rand.Rand, frames, slot int, now time.Time) *pump {
	d := wanem.NewDirection(rng)
	d.Set(wanem.Settings{}, now)
	return &pump{
		name: name, in: in, out: out,
		wake:    make(chan struct{}, 1),
		dir:     d,
		q:       wanem.NewQueue(frames, slot),
		scratch: make([]byte, slot),
	}
}

func (p *pump) set(s wanem.Settings, now time.Time) {
	p.mu.Lock()
	p.dir.Set(s, now)
	p.mu.Unlock()
}

func (p *pump) settings() wanem.Settings {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dir.Settings()
}

// Stats are one direction's counters: frames and bytes per verdict of the
// emulator, and the shell's own drops and errors.
type Stats struct {
	Frames    map[string]uint64 `json:"frames"`
	Bytes     map[string]uint64 `json:"bytes"`
	QueueFull uint64            `json:"queueFull"` // the delay line had no free slot
	Oversize  uint64            `json:"oversize"`  // a frame larger than a slot (offloads on?)
	ReadErrs  uint64            `json:"readErrors"`
	WriteErrs uint64            `json:"writeErrors"`
	Queued    int               `json:"queued"`
	MaxQueued int               `json:"maxQueued"`
	// Late counts frames the writer sent more than 5 ms after they were
	// due (the emulator was starved); MaxLateUs is the latest, in µs. A
	// frame read late is not seen: its delay counts from when it was read.
	Late      uint64 `json:"late"`
	MaxLateUs int64  `json:"maxLateUs"`
}

func (p *pump) stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.dir.Counts()
	st := Stats{Frames: map[string]uint64{}, Bytes: map[string]uint64{},
		QueueFull: p.queueFull, Oversize: p.oversize, ReadErrs: p.readErrs, WriteErrs: p.writeErrs,
		Queued: p.q.Len(), MaxQueued: p.maxQueue, Late: p.late, MaxLateUs: p.maxLate.Microseconds()}
	for v := wanem.Pass; v <= wanem.DropQueue; v++ {
		st.Frames[v.String()] = c.Frames[v]
		st.Bytes[v.String()] = c.Bytes[v]
	}
	return st
}

// reader reads frames until ctx ends. A frame that is due at once and
// finds the queue empty is written right here; since the writer pops a
// frame only after writing it, an empty queue means nothing is in flight
// and order is kept.
func (p *pump) reader(ctx context.Context, log *slog.Logger) {
	for ctx.Err() == nil {
		p.mu.Lock()
		buf := p.q.Free()
		p.mu.Unlock()
		full := buf == nil
		if full {
			buf = p.scratch
		}
		n, err := p.in.read(buf)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			p.mu.Lock()
			p.readErrs++
			p.mu.Unlock()
			log.Warn("read", "dir", p.name, "port", p.in.name, "err", err)
			if errors.Is(err, unix.EBADF) || errors.Is(err, unix.ENETDOWN) || errors.Is(err, unix.ENXIO) {
				return
			}
			continue
		}
		now := time.Now()
		p.mu.Lock()
		if n > len(buf) {
			p.oversize++
			p.mu.Unlock()
			continue
		}
		due, v := p.dir.Admit(now, n)
		switch {
		case v != wanem.Pass:
			p.mu.Unlock()
		case full:
			p.queueFull++
			p.mu.Unlock()
		case p.q.Len() == 0 && !due.After(now):
			p.mu.Unlock()
			p.send(buf[:n])
		default:
			wasEmpty := p.q.Len() == 0
			p.q.Commit(n, due)
			p.maxQueue = max(p.maxQueue, p.q.Len())
			p.mu.Unlock()
			if wasEmpty {
				select {
				case p.wake <- struct{}{}:
				default:
				}
			}
		}
	}
}

func (p *pump) send(frame []byte) {
	if err := p.out.write(frame); err != nil {
		p.mu.Lock()
		p.writeErrs++
		p.mu.Unlock()
	}
}

// writer writes queued frames when they are due, until ctx ends.
func (p *pump) writer(ctx context.Context, log *slog.Logger) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		p.mu.Lock()
		frame, due, ok := p.q.Head()
		p.mu.Unlock()
		if !ok {
			select {
			case <-p.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		late := time.Since(due)
		p.send(frame)
		p.mu.Lock()
		p.q.Pop()
		if late > lateBound {
			p.late++
			p.maxLate = max(p.maxLate, late)
		}
		p.mu.Unlock()
	}
}
