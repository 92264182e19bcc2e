package wanem

import "time"

// Queue is a bounded FIFO of frames waiting for their due time, in slots
// whose buffers are allocated on first use and then reused, so a running
// bridge allocates nothing per frame. Because a Direction's due times never
// decrease, the head is always the frame due first.
//
// One producer and one consumer may share a Queue if every call is made
// under a lock held by both, except that the producer may fill the buffer
// returned by Free, and the consumer may read the buffer returned by Head,
// outside it: those slots are not reachable by the other side.
type Queue struct {
	slots      []slot
	slotSize   int
	head, size int
}

type slot struct {
	buf []byte
	n   int
	due time.Time
}

// NewQueue returns a queue of n slots of slotSize bytes each.
func NewQueue(n, slotSize int) *Queue {
	return &Queue{slots: make([]slot, n), slotSize: slotSize}
}

// Len returns the number of frames waiting.
func (q *Queue) Len() int { return q.size }

// Free returns the buffer of the next free slot, or nil when the queue is
// full. The frame written into it joins the queue with Commit.
func (q *Queue) Free() []byte {
	if q.size == len(q.slots) {
		return nil
	}
	s := &q.slots[(q.head+q.size)%len(q.slots)]
	if s.buf == nil {
		s.buf = make([]byte, q.slotSize)
	}
	return s.buf
}

// Commit appends the first n bytes of the buffer Free returned, due at
// due. It panics if the queue is full: Free said so.
func (q *Queue) Commit(n int, due time.Time) {
	if q.size == len(q.slots) {
		panic("wanem: Commit on a full Queue")
	}
	s := &q.slots[(q.head+q.size)%len(q.slots)]
	s.n, s.due = n, due
	q.size++
}

// Head returns the first frame and its due time, or ok=false when empty.
func (q *Queue) Head() (frame []byte, due time.Time, ok bool) {
	if q.size == 0 {
		return nil, time.Time{}, false
	}
	s := &q.slots[q.head]
	return s.buf[:s.n], s.due, true
}

// Pop removes the head. The slot's buffer stays for reuse.
func (q *Queue) Pop() {
	if q.size == 0 {
		return
	}
	q.head = (q.head + 1) % len(q.slots)
	q.size--
}
