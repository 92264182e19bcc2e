package pipe

import (
	"os"
	"testing"

	"golang.zx2c4.com/wireguard/tun"
)

// benchDev refills bufs from templates on every Read (copying, as a real
// device would) and discards writes.
type benchDev struct {
	tmpl [][]byte
}

func (b *benchDev) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	for i := range bufs {
		sizes[i] = copy(bufs[i][offset:], b.tmpl[i%len(b.tmpl)])
	}
	return len(bufs), nil
}
func (b *benchDev) Write(bufs [][]byte, offset int) (int, error) { return len(bufs), nil }
func (b *benchDev) File() *os.File                               { return nil }
func (b *benchDev) MTU() (int, error)                            { return 1420, nil }
func (b *benchDev) Name() (string, error)                        { return "bench", nil }
func (b *benchDev) Events() <-chan tun.Event                     { return nil }
func (b *benchDev) Close() error                                 { return nil }
func (b *benchDev) BatchSize() int                               { return 64 }

const benchBatch = 64

// BenchmarkRead reports ns per packet for a batch of 64 TCP packets (1400
// bytes payload) read through the pipe, and through the raw fake for the
// cost of the copy alone.
func BenchmarkRead(b *testing.B) {
	for _, bc := range []struct {
		name string
		dst  string
		raw  bool
	}{
		{"raw-copy", "10.30.0.5", true},
		{"plain", "10.30.0.5", false},
		{"translated", "10.72.0.5", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tcp := make([]byte, 20+1400)
			tcp[12] = 5 << 4
			tcp[13] = 0x10
			inner := &benchDev{tmpl: [][]byte{ipPacket("10.244.1.1", bc.dst, protoTCP, tcp)}}
			var dev tun.Device = inner
			if !bc.raw {
				d := Wrap(inner)
				d.SetRules(testRules(b))
				dev = d
			}
			bufs, sizes := makeBufs(benchBatch)
			b.ReportAllocs()
			for b.Loop() {
				if n, err := dev.Read(bufs, sizes, testOffset); n != benchBatch || err != nil {
					b.Fatalf("Read = %d, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/packet")
		})
	}
}

// BenchmarkWrite reports ns per packet for a batch of 64 TCP packets
// written through the pipe. Translated packets are translated back and
// forth by alternating the source peer's view, so every write rewrites.
func BenchmarkWrite(b *testing.B) {
	for _, bc := range []struct {
		name string
		src  string
		dst  string
	}{
		{"plain", "10.30.0.5", "10.244.1.1"},
		{"translated", "10.72.0.5", "10.71.1.1"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tcp := make([]byte, 20+1400)
			tcp[12] = 5 << 4
			tcp[13] = 0x10
			pkt := ipPacket(bc.src, bc.dst, protoTCP, tcp)
			d := Wrap(&benchDev{})
			d.SetRules(testRules(b))
			bufs := make([][]byte, benchBatch)
			for i := range bufs {
				bufs[i] = append(make([]byte, testOffset), pkt...)
			}
			b.ReportAllocs()
			for b.Loop() {
				// Restore the destination (the translation rewrote it).
				for _, buf := range bufs {
					copy(buf[testOffset+10:testOffset+20], pkt[10:20])
				}
				if n, err := d.Write(bufs, testOffset); n != benchBatch || err != nil {
					b.Fatalf("Write = %d, %v", n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchBatch), "ns/packet")
		})
	}
}

// TestZeroAllocs keeps Read and Write allocation-free per batch (the drop
// path reuses pooled scratch space, which AllocsPerRun's warm-up fills).
func TestZeroAllocs(t *testing.T) {
	tcp := make([]byte, 20+100)
	tcp[12] = 5 << 4
	inner := &benchDev{tmpl: [][]byte{
		ipPacket("10.244.1.1", "10.72.0.5", protoTCP, tcp),
		ipPacket("192.0.2.1", "10.72.0.5", protoTCP, tcp), // dropped: bad source
	}}
	d := Wrap(inner)
	d.SetRules(testRules(t))
	bufs, sizes := makeBufs(8)
	if n := testing.AllocsPerRun(50, func() { d.Read(bufs, sizes, testOffset) }); n != 0 {
		t.Errorf("Read: %v allocs per batch", n)
	}
	w := make([][]byte, 8)
	for i := range w {
		w[i] = append(make([]byte, testOffset), ipPacket("10.30.0.5", "10.244.1.1", protoTCP, tcp)...)
	}
	if n := testing.AllocsPerRun(50, func() { d.Write(w, testOffset) }); n != 0 {
		t.Errorf("Write: %v allocs per batch", n)
	}
}
