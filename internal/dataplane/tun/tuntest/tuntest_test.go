package tuntest

import (
	"bytes"
	"errors"
	"io"
	"math/rand"
	"os"
	"testing"

	"golang.zx2c4.com/wireguard/tun"
)

func TestPairDeliversInOrderBothWays(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	a, b := NewPair(1500)
	defer a.Close()
	defer b.Close()
	for _, dir := range []struct {
		name     string
		from, to *Device
	}{{"a->b", a, b}, {"b->a", b, a}} {
		t.Run(dir.name, func(t *testing.T) {
			const offset = 16
			var want [][]byte
			var bufs [][]byte
			for i := 0; i < 10; i++ {
				p := make([]byte, 1+rng.Intn(1500))
				rng.Read(p)
				want = append(want, p)
				bufs = append(bufs, append(make([]byte, offset), p...))
			}
			n, err := dir.from.Write(bufs, offset)
			if err != nil || n != len(bufs) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(bufs))
			}
			got := readAll(t, dir.to, len(want), offset)
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("packet %d differs: got %d bytes, want %d", i, len(got[i]), len(want[i]))
				}
			}
		})
	}
}

func readAll(t *testing.T, d *Device, count, offset int) [][]byte {
	t.Helper()
	var out [][]byte
	for len(out) < count {
		bufs := make([][]byte, 4) // smaller than count: exercises batching over several Reads
		for i := range bufs {
			bufs[i] = make([]byte, offset+2000)
		}
		sizes := make([]int, len(bufs))
		n, err := d.Read(bufs, sizes, offset)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if n == 0 || n > len(bufs) {
			t.Fatalf("Read returned %d packets", n)
		}
		for i := 0; i < n; i++ {
			out = append(out, bufs[i][offset:offset+sizes[i]])
		}
	}
	return out
}

func TestReadBatchesQueuedPackets(t *testing.T) {
	a, b := NewPair(100)
	defer a.Close()
	defer b.Close()
	pkts := [][]byte{{1}, {2}, {3}}
	if _, err := a.Write(pkts, 0); err != nil {
		t.Fatal(err)
	}
	bufs := [][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 10), make([]byte, 10)}
	sizes := make([]int, 4)
	n, err := b.Read(bufs, sizes, 0)
	if err != nil || n != 3 {
		t.Fatalf("Read = %d, %v; want all 3 queued packets in one batch", n, err)
	}
}

func TestWriteRejectsOversize(t *testing.T) {
	a, b := NewPair(100)
	defer a.Close()
	defer b.Close()
	if _, err := a.Write([][]byte{make([]byte, 101)}, 0); err == nil {
		t.Fatal("Write of a packet above the MTU succeeded")
	}
}

func TestReadShortBuffer(t *testing.T) {
	a, b := NewPair(100)
	defer a.Close()
	defer b.Close()
	if _, err := a.Write([][]byte{make([]byte, 50)}, 0); err != nil {
		t.Fatal(err)
	}
	_, err := b.Read([][]byte{make([]byte, 20)}, make([]int, 1), 0)
	if !errors.Is(err, io.ErrShortBuffer) {
		t.Fatalf("Read into a short buffer: err = %v, want io.ErrShortBuffer", err)
	}
}

func TestCloseSemantics(t *testing.T) {
	a, b := NewPair(100)
	defer b.Close()
	if ev := <-a.Events(); ev != tun.EventUp {
		t.Fatalf("first event = %v, want EventUp", ev)
	}
	done := make(chan error)
	go func() {
		_, err := a.Read([][]byte{make([]byte, 100)}, make([]int, 1), 0)
		done <- err
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("blocked Read after Close: err = %v, want os.ErrClosed", err)
	}
	if _, err := b.Write([][]byte{{1}}, 0); err != nil { // queued for a, after a closed: dropped
		t.Fatal(err)
	}
	if _, err := a.Read([][]byte{make([]byte, 100)}, make([]int, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Read after Close: err = %v, want os.ErrClosed", err)
	}
	if _, err := a.Write([][]byte{{1}}, 0); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Write after Close: err = %v, want os.ErrClosed", err)
	}
	if _, ok := <-a.Events(); ok {
		t.Fatal("Events channel still open after Close")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	// Writes towards a closed end are dropped, not errors, and never block.
	for i := 0; i < 2*queueLen; i++ {
		if _, err := b.Write([][]byte{{1}}, 0); err != nil {
			t.Fatalf("Write towards closed peer: %v", err)
		}
	}
}

func BenchmarkPair(b *testing.B) {
	x, y := NewPair(1500)
	defer x.Close()
	defer y.Close()
	pkt := [][]byte{make([]byte, 1400)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		bufs := make([][]byte, batchSize)
		for i := range bufs {
			bufs[i] = make([]byte, 1500)
		}
		sizes := make([]int, batchSize)
		for got := 0; got < b.N; {
			n, err := y.Read(bufs, sizes, 0)
			if err != nil {
				return
			}
			got += n
		}
	}()
	b.SetBytes(1400)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := x.Write(pkt, 0); err != nil {
			b.Fatal(err)
		}
	}
	<-done
}
