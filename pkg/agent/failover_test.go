package agent_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-relay/relay/pkg/admin"
)

// transferSize is the bulk transfer of the failover test. Under the race
// detector the stack is several times slower, so the transfer is smaller;
// it still spans the cut because the cut is made when a quarter of it has
// arrived.
func transferSize() int {
	if raceEnabled {
		return 4 << 20
	}
	return 20 << 20
}

// sinkReport is what the receiving side of a bulk transfer measured.
type sinkReport struct {
	bytes  int
	maxGap time.Duration // longest wait between two reads
	gapAt  time.Time     // when that wait ended
	err    error
}

// receive reads c until EOF, timing every read. It closes reached when
// mark bytes have arrived.
func receive(c net.Conn, mark int, reached chan<- struct{}, progress *atomic.Int64) sinkReport {
	var r sinkReport
	buf := make([]byte, 64<<10)
	last := time.Now()
	signalled := false
	for {
		_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
		n, err := c.Read(buf)
		now := time.Now()
		if n > 0 {
			if g := now.Sub(last); g > r.maxGap && r.bytes > 0 {
				r.maxGap, r.gapAt = g, now
			}
			last = now
			r.bytes += n
			progress.Store(int64(r.bytes))
			if !signalled && r.bytes >= mark {
				signalled = true
				close(reached)
			}
		}
		if err == io.EOF {
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
	}
}

// TestFailoverDuringTransfer cuts A-B's direct path in the middle of a bulk
// TCP transfer from A to a pod behind B. The transfer completes over the
// consumer path; the longest stall the receiving application saw is
// reported. After the link is restored, traffic fails back to direct once
// it has been up for failbackHold.
func TestFailoverDuringTransfer(t *testing.T) {
	const failbackHold = 3 * time.Second // the default, spelled out
	b := newBed(t, bedOptions{Direct: 10 * time.Millisecond, Consumer: 30 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	b.waitActive(relayB, relayA, "direct")

	size := transferSize()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "tcp", pod(2, sinkPort).String())
	if err != nil {
		t.Fatalf("dial B's sink pod: %v", err)
	}
	defer c.Close()
	var sc net.Conn
	select {
	case sc = <-b.sink.conns:
	case <-time.After(waitTimeout):
		t.Fatal("the sink pod never saw the connection")
	}

	reached := make(chan struct{})
	report := make(chan sinkReport, 1)
	var progress atomic.Int64
	go func() { report <- receive(sc, size/4, reached, &progress) }()
	sent := make(chan error, 1)
	start := time.Now()
	go func() {
		chunk := make([]byte, 32<<10)
		for left := size; left > 0; left -= len(chunk) {
			if _, err := c.Write(chunk[:min(len(chunk), left)]); err != nil {
				sent <- fmt.Errorf("write: %w", err)
				return
			}
		}
		sent <- c.(interface{ CloseWrite() error }).CloseWrite()
	}()

	var cutAt time.Time
	select {
	case <-reached:
		cutAt = time.Now()
		b.direct.Cut(true)
	case r := <-report:
		t.Fatalf("transfer ended before the cut: %+v", r)
	case <-time.After(2 * waitTimeout):
		t.Fatal("the first quarter of the transfer never arrived")
	}
	switched := b.waitActive(relayA, relayB, "consumer")

	var r sinkReport
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	deadline := time.After(3 * waitTimeout)
wait:
	for {
		select {
		case r = <-report:
			break wait
		case <-tick.C:
			pa, _ := b.peer(relayA, relayB)
			pb, _ := b.peer(relayB, relayA)
			t.Logf("%s after the cut: %d of %d bytes; A via %s tx %d rx %d; B via %s tx %d rx %d",
				time.Since(cutAt).Round(time.Millisecond), progress.Load(), size, pa.ActivePath, pa.TxBytes, pa.RxBytes, pb.ActivePath, pb.TxBytes, pb.RxBytes)
		case <-deadline:
			// A crawl after the cut (a few KB/s) is the netstack's TCP
			// recovering a burst loss badly: see the RACK note in
			// pkg/tun/netstack_tune.go.
			t.Fatalf("transfer did not complete within %s of the cut: %d of %d bytes (see the comment)",
				3*waitTimeout, progress.Load(), size)
		}
	}
	if err := <-sent; err != nil {
		t.Fatalf("sender: %v", err)
	}
	elapsed := time.Since(start)
	if r.err != nil || r.bytes != size {
		t.Fatalf("sink got %d of %d bytes (err %v)", r.bytes, size, r.err)
	}
	if ev := switchEvent(b.agent(relayA).Status(), relayB, "direct", "consumer"); ev.Reason != "down" {
		t.Errorf("switch to consumer: %+v, want reason down", ev)
	}
	t.Logf("%d MB in %s; cut at %s, A switched %s after the cut; longest stall seen by the receiver: %s (ended %s after the cut)",
		size>>20, elapsed.Round(time.Millisecond), cutAt.Sub(start).Round(time.Millisecond),
		switched.Round(time.Millisecond), r.maxGap.Round(time.Millisecond), r.gapAt.Sub(cutAt).Round(time.Millisecond))

	restored := time.Now()
	b.direct.Cut(false)
	back := b.waitActive(relayA, relayB, "direct")
	ev := lastEvent(b.agent(relayA).Status(), relayB)
	if ev.To != "direct" || !slices.Contains([]string{"failback", "better"}, ev.Reason) {
		t.Errorf("back to direct by %+v, want reason failback or better", ev)
	}
	// A lower bound, not a speed assertion: the path must stay up for
	// failbackHold before traffic returns to it.
	if back < failbackHold {
		t.Errorf("failed back %s after the restore, before failbackHold %s", back, failbackHold)
	}
	t.Logf("failed back to direct %s after the restore (reason %s)", time.Since(restored).Round(time.Millisecond), ev.Reason)
}

// switchEvent is the latest switch of peer from one path to another.
func switchEvent(st admin.Status, peer, from, to string) admin.Event {
	for i := len(st.Events) - 1; i >= 0; i-- {
		e := st.Events[i]
		if e.Peer == peer && e.From == from && e.To == to {
			return e
		}
	}
	return admin.Event{}
}
