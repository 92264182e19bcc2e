package agent_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// transferSize is the bulk transfer of the tests that disturb a path under
// load. Under the race detector the stack is several times slower, so the
// transfer is smaller; it still spans the disturbance, which is made when
// a quarter of it has arrived.
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

// transfer is a bulk TCP transfer from A to the sink pod behind B.
type transfer struct {
	size     int
	start    time.Time
	reached  chan struct{}   // closed when a quarter has arrived
	report   chan sinkReport // the receiver's result
	sent     chan error      // the sender's result
	progress atomic.Int64    // bytes received so far
}

// startBulk opens the connection and starts sender and receiver. Both end
// when the bed is closed, at the latest.
func (b *bed) startBulk(size int) *transfer {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := b.agent(relayA).DialContext(ctx, "tcp", pod(2, sinkPort).String())
	if err != nil {
		b.t.Fatalf("dial B's sink pod: %v", err)
	}
	b.t.Cleanup(func() { c.Close() })
	var sc net.Conn
	select {
	case sc = <-b.sink.conns:
	case <-time.After(waitTimeout):
		b.t.Fatal("the sink pod never saw the connection")
	}
	x := &transfer{size: size, start: time.Now(), reached: make(chan struct{}), report: make(chan sinkReport, 1), sent: make(chan error, 1)}
	go func() { x.report <- x.receive(sc) }()
	go func() {
		chunk := make([]byte, 32<<10)
		for left := size; left > 0; left -= len(chunk) {
			if _, err := c.Write(chunk[:min(len(chunk), left)]); err != nil {
				x.sent <- fmt.Errorf("write: %w", err)
				return
			}
		}
		x.sent <- c.(interface{ CloseWrite() error }).CloseWrite()
	}()
	return x
}

// receive reads c until EOF, timing every read.
func (x *transfer) receive(c net.Conn) sinkReport {
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
			x.progress.Store(int64(r.bytes))
			if !signalled && r.bytes >= x.size/4 {
				signalled = true
				close(x.reached)
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

// waitQuarter waits until a quarter of the transfer has arrived.
func (x *transfer) waitQuarter(t *testing.T) {
	t.Helper()
	select {
	case <-x.reached:
	case r := <-x.report:
		t.Fatalf("transfer ended before a quarter arrived: %+v", r)
	case <-time.After(2 * waitTimeout):
		t.Fatal("the first quarter of the transfer never arrived")
	}
}

// finish waits for the whole transfer, logging progress, and checks that
// every byte arrived. A crawl (a few KB/s) after a burst loss is the
// netstack's TCP recovering it badly: see the RACK note in
// internal/dataplane/netstack/tune.go.
func (x *transfer) finish(t *testing.T, b *bed, since time.Time) sinkReport {
	t.Helper()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	deadline := time.After(3 * waitTimeout)
	var r sinkReport
wait:
	for {
		select {
		case r = <-x.report:
			break wait
		case <-tick.C:
			pa, _ := b.peer(relayA, relayB)
			pb, _ := b.peer(relayB, relayA)
			t.Logf("%s later: %d of %d bytes; A via %s tx %d rx %d; B via %s tx %d rx %d",
				time.Since(since).Round(time.Millisecond), x.progress.Load(), x.size, pa.ActivePath, pa.TxBytes, pa.RxBytes, pb.ActivePath, pb.TxBytes, pb.RxBytes)
		case <-deadline:
			t.Fatalf("transfer did not complete within %s: %d of %d bytes (see the comment)", 3*waitTimeout, x.progress.Load(), x.size)
		}
	}
	if err := <-x.sent; err != nil {
		t.Fatalf("sender: %v", err)
	}
	if r.err != nil || r.bytes != x.size {
		t.Fatalf("sink got %d of %d bytes (err %v)", r.bytes, x.size, r.err)
	}
	return r
}

// TestBlackholeDuringTransfer blackholes A-B's direct path for 200 ms in the
// middle of a bulk transfer, too short for a failover to be needed: the
// transfer must recover from losing a whole window and complete.
func TestBlackholeDuringTransfer(t *testing.T) {
	b := newBed(t, bedOptions{Direct: 10 * time.Millisecond, Consumer: 30 * time.Millisecond})
	b.waitActive(relayA, relayB, "direct")
	x := b.startBulk(transferSize())
	x.waitQuarter(t)
	cutAt := time.Now()
	b.direct.Cut(true)
	time.Sleep(200 * time.Millisecond) // real: the blackhole's length on the real data path, not a wait for state
	b.direct.Cut(false)
	r := x.finish(t, b, cutAt)
	t.Logf("%d MB in %s; longest stall seen by the receiver: %s; A's path to B now %s",
		x.size>>20, time.Since(x.start).Round(time.Millisecond), r.maxGap.Round(time.Millisecond), b.activePath(relayA, relayB))
}
