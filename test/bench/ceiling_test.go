package bench

import (
	"crypto/rand"
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// ceilingPacket is the size of the inner packet both ceiling benchmarks
// move: the IP packet a pod sends, which the tunnel seals whole and which
// crosses each relay's TUN device whole (perf/scenarios/ceiling.sh turns
// the figures into a goodput ceiling).
const ceilingPacket = 1400

// transportHeader is WireGuard's transport header (type, receiver index,
// counter): wireguard-go seals into the buffer right after it, so the
// ciphertext lands where the plaintext was.
const transportHeader = 16

// BenchmarkCeilingAEAD measures this machine's ChaCha20-Poly1305 on one
// core for 1400-byte packets, called as wireguard-go calls it
// (device/send.go RoutineEncryption, device/receive.go RoutineDecryption):
// golang.org/x/crypto/chacha20poly1305 at the version in go.mod, a 12-byte
// nonce of four zero bytes and the little-endian packet counter, no
// additional data, sealed in place after a 16-byte header and opened in
// place. Sub-benchmarks:
//   - seal-open: one op seals one packet and opens it again, the cipher's
//     whole cost per delivered packet of a tunnel (the sender seals, the
//     receiver opens); the ceiling is made from this one;
//   - seal, open: each half alone (open reads a sealed copy into a
//     separate buffer, so that it can open the same message every time).
//
// wireguard-go pads the plaintext to a multiple of 16 bytes within the
// MTU (1400 to 1408); the benchmark seals exactly 1400 bytes, a 0.6 %
// difference. Besides ns/op (wall time), each reports cpu-ns/packet: the
// process's CPU time (user and system) per packet, which other tenants of
// a shared machine inflate less (they take the core, not this process's
// CPU time). No root needed:
//
//	go test -run '^$' -bench 'CeilingAEAD' -cpu 1 ./test/bench/
func BenchmarkCeilingAEAD(b *testing.B) {
	var key [chacha20poly1305.KeySize]byte
	if _, err := rand.Read(key[:]); err != nil {
		b.Fatal(err)
	}
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, transportHeader+ceilingPacket+chacha20poly1305.Overhead)
	if _, err := rand.Read(buf[transportHeader : transportHeader+ceilingPacket]); err != nil {
		b.Fatal(err)
	}
	var nonce [chacha20poly1305.NonceSize]byte

	b.Run("seal-open", func(b *testing.B) {
		b.SetBytes(ceilingPacket)
		b.ReportAllocs()
		var counter uint64
		cpu := startCPU(b)
		for b.Loop() {
			binary.LittleEndian.PutUint64(nonce[4:], counter)
			counter++
			sealed := aead.Seal(buf[:transportHeader], nonce[:], buf[transportHeader:transportHeader+ceilingPacket], nil)
			content := sealed[transportHeader:]
			if _, err := aead.Open(content[:0], nonce[:], content, nil); err != nil {
				b.Fatalf("open: %v", err)
			}
		}
		cpu.report(b, 1)
	})
	b.Run("seal", func(b *testing.B) {
		b.SetBytes(ceilingPacket)
		b.ReportAllocs()
		var counter uint64
		cpu := startCPU(b)
		for b.Loop() {
			binary.LittleEndian.PutUint64(nonce[4:], counter)
			counter++
			// Sealing the previous ciphertext again costs the same.
			aead.Seal(buf[:transportHeader], nonce[:], buf[transportHeader:transportHeader+ceilingPacket], nil)
		}
		cpu.report(b, 1)
	})
	b.Run("open", func(b *testing.B) {
		binary.LittleEndian.PutUint64(nonce[4:], 1)
		sealed := aead.Seal(nil, nonce[:], buf[transportHeader:transportHeader+ceilingPacket], nil)
		out := make([]byte, ceilingPacket)
		b.SetBytes(ceilingPacket)
		b.ReportAllocs()
		cpu := startCPU(b)
		for b.Loop() {
			if _, err := aead.Open(out[:0], nonce[:], sealed, nil); err != nil {
				b.Fatalf("open: %v", err)
			}
		}
		cpu.report(b, 1)
	})
}

// cpuClock is the process's CPU time at the start of a benchmark loop.
type cpuClock time.Duration

// startCPU reads the process's CPU time (user and system, all threads).
func startCPU(b *testing.B) cpuClock { return cpuClock(processCPU(b)) }

// report adds cpu-ns/packet: the CPU time since start over b.N*perOp
// packets. With -cpu 1 the loop's goroutine is the only busy one, so this
// is the loop's own CPU time plus the runtime's small background work.
func (c cpuClock) report(b *testing.B, perOp int) {
	used := processCPU(b) - time.Duration(c)
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N*perOp), "cpu-ns/packet")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
