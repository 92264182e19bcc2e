package wanem

import (
	"testing"
	"time"
)

func TestQueueFIFOAndFull(t *testing.T) {
	q := NewQueue(3, 16)
	for i := range 3 {
		buf := q.Free()
		if buf == nil {
			t.Fatalf("slot %d: queue full too early", i)
		}
		buf[0] = byte(i)
		q.Commit(1, t0.Add(time.Duration(i)))
	}
	if q.Free() != nil {
		t.Fatal("Free on a full queue returned a buffer")
	}
	for i := range 3 {
		f, due, ok := q.Head()
		if !ok || f[0] != byte(i) || len(f) != 1 || !due.Equal(t0.Add(time.Duration(i))) {
			t.Fatalf("head %d: %v %v %v", i, f, due, ok)
		}
		q.Pop()
	}
	if _, _, ok := q.Head(); ok || q.Len() != 0 {
		t.Fatal("queue not empty after popping everything")
	}
}

func TestQueueCommitFullPanics(t *testing.T) {
	q := NewQueue(1, 8)
	q.Free()
	q.Commit(1, t0)
	defer func() {
		if recover() == nil {
			t.Error("Commit on a full queue did not panic")
		}
	}()
	q.Commit(1, t0)
}

func TestQueueReusesBuffers(t *testing.T) {
	q := NewQueue(4, 1514)
	for range 8 { // warm every slot
		q.Free()
		q.Commit(10, t0)
		q.Pop()
	}
	allocs := testing.AllocsPerRun(1000, func() {
		buf := q.Free()
		buf[0] = 1
		q.Commit(10, t0)
		q.Head()
		q.Pop()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per frame, want 0", allocs)
	}
}
