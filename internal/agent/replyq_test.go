package agent

import (
	"testing"
	"time"
)

// TestLazyRepliesWaitOnlyForAPlannedWake: a reply is queued only while the
// owner plans to wake within replyWait of its arrival; never while the
// owner is awake (its plan cleared by take) or has no plan, never for a
// wake further off, and never beyond the queue's bound. take hands over
// everything queued, once.
func TestLazyRepliesWaitOnlyForAPlannedWake(t *testing.T) {
	var l lazyReplies
	at := time.Unix(1000, 0)
	r := probeReply{peer: "b", at: at}
	if q, full := l.offer(r); q || full {
		t.Fatal("queued with no wake planned")
	}
	l.plan(at.Add(replyWait + time.Nanosecond))
	if q, _ := l.offer(r); q {
		t.Fatal("queued for a wake beyond replyWait")
	}
	l.plan(at.Add(replyWait))
	for i := range maxLazyReplies {
		if q, full := l.offer(r); !q || full {
			t.Fatalf("reply %d not queued for a wake %v away", i, replyWait)
		}
	}
	if q, full := l.offer(r); q || !full {
		t.Fatalf("reply beyond the bound: queued %v, full %v", q, full)
	}
	got := l.take(nil)
	if len(got) != maxLazyReplies {
		t.Fatalf("took %d replies, want %d", len(got), maxLazyReplies)
	}
	if q, _ := l.offer(r); q {
		t.Fatal("queued while the owner is awake (after take)")
	}
	if again := l.take(nil); len(again) != 0 {
		t.Fatalf("took %d replies twice", len(again))
	}
	l.plan(time.Time{})
	if q, _ := l.offer(r); q {
		t.Fatal("queued after the owner planned no wake")
	}
}

// TestFullLazyQueueWakesTheOwner: a reply that finds the queue full goes
// to the owner's channel (waking it) instead of being dropped, which would
// count an answered probe as lost.
func TestFullLazyQueueWakesTheOwner(t *testing.T) {
	a := &Agent{replyc: make(chan probeReply, 1)}
	at := time.Unix(1000, 0)
	a.lazy.plan(at.Add(replyWait))
	for range maxLazyReplies {
		a.deliverReply(probeReply{peer: "b", at: at})
	}
	if len(a.replyc) != 0 {
		t.Fatal("a reply that fit the queue woke the owner")
	}
	a.deliverReply(probeReply{peer: "c", at: at})
	select {
	case r := <-a.replyc:
		if r.peer != "c" {
			t.Fatalf("the owner got %q, want the reply that found the queue full", r.peer)
		}
	default:
		t.Fatal("a reply that found the queue full was dropped")
	}
}
