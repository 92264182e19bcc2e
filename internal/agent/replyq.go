package agent

import (
	"sync"
	"time"
)

// Probe replies that wait for the owner's next wake. A reply handed over
// the channel (replyc) wakes the owner goroutine at once, for one step of
// every machine; with many paths, that is one wake per reply on top of the
// probe grid's wakes, for work that the RTT (timed at arrival) does not
// need done at once. So a reply that arrives when the owner has already
// planned to wake within replyWait of it is queued here instead and
// handled at the start of that step; any other reply (the owner asleep for
// longer, or with no timer) goes over the channel as before.
//
// The plan and the queue share one lock, so a reply is never queued for a
// wake that has already happened: the owner clears its plan and takes the
// queue together when it starts a step (takeLazy), and plans its next wake
// when the step ends (planWake).

// replyWait bounds how long a queued reply waits for the owner: the probe
// grid (health's 5 ms), by which the owner wakes anyway when it has many
// paths. A path comes up, or a selector sees a new RTT, at most this much
// later than it would with a wake per reply; RTTs are timed on arrival.
const replyWait = 5 * time.Millisecond

// maxLazyReplies bounds the queue as replyc's capacity bounds the channel;
// a reply beyond it counts as a lost probe.
const maxLazyReplies = 1024

// lazyReplies is the queue with the owner's planned wake.
type lazyReplies struct {
	mu   sync.Mutex
	wake time.Time // the owner's next planned wake; zero while it steps or when it has no timer
	q    []probeReply
}

// offer queues r if the owner plans to wake within replyWait of r.at, and
// reports whether it did.
func (l *lazyReplies) offer(r probeReply) (queued, full bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake.IsZero() || l.wake.Sub(r.at) > replyWait {
		return false, false
	}
	if len(l.q) >= maxLazyReplies {
		return false, true
	}
	l.q = append(l.q, r)
	return true, false
}

// take clears the plan (the owner is awake) and moves the queue into buf.
func (l *lazyReplies) take(buf []probeReply) []probeReply {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.wake = time.Time{}
	buf = append(buf, l.q...)
	clear(l.q)
	l.q = l.q[:0]
	return buf
}

// plan records the owner's next wake; zero: none planned.
func (l *lazyReplies) plan(wake time.Time) {
	l.mu.Lock()
	l.wake = wake
	l.mu.Unlock()
}

// deliverReply hands an authenticated reply to the owner goroutine: queued
// for its planned wake if that is near (above), else over the channel.
func (a *Agent) deliverReply(r probeReply) {
	if queued, _ := a.lazy.offer(r); !queued {
		// Not waiting for a planned wake, or the queue is full: wake the
		// owner (a full queue must not turn answers into losses).
		a.enqueueReply(r)
	}
}

// takeLazy handles the queued replies; the owner calls it first in every
// step, so that they count before any deadline does.
func (a *Agent) takeLazy() {
	a.lazyBuf = a.lazy.take(a.lazyBuf[:0])
	for _, r := range a.lazyBuf {
		a.onReply(r)
	}
	clear(a.lazyBuf)
}

// planWake records when the owner loop will wake next, as Run computes it
// from the monitor's next deadline; the owner calls it last in every step.
func (a *Agent) planWake(now time.Time) {
	var wake time.Time
	if d, ok := sleepFor(now, a.eng.NextDeadline()); ok {
		wake = now.Add(d)
	}
	a.lazy.plan(wake)
}
