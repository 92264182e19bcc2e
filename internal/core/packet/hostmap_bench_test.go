package packet

import (
	"net/netip"
	"strconv"
	"testing"
)

// hostMappings returns n /32 mappings, one per pod, the way the operator
// writes them for Liqo (docs/liqo-addressing.md): 10.244.x.y → 10.71.x.y.
func hostMappings(n int) []Mapping {
	ms := make([]Mapping, n)
	for i := range ms {
		real := netip.AddrFrom4([4]byte{10, 244, byte(i >> 8), byte(i)})
		as := netip.AddrFrom4([4]byte{10, 71, byte(i >> 8), byte(i)})
		ms[i] = Mapping{Real: netip.PrefixFrom(real, 32), As: netip.PrefixFrom(as, 32)}
	}
	return ms
}

// BenchmarkTranslatorHostMappings measures, for thousands of per-pod /32
// mappings (a consumer with thousands of offloaded pods), building the Translator (done on every
// change of a peer's seesUs) and translating one packet to a pod.
func BenchmarkTranslatorHostMappings(b *testing.B) {
	for _, n := range []int{100, 1000, 8192} {
		ms := hostMappings(n)
		b.Run("build/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewTranslator(ms); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("translate/"+strconv.Itoa(n), func(b *testing.B) {
			tr, inv := mustTranslator(b, ms), mustTranslator(b, inverse(ms))
			r := newRand(1)
			pkts := make([][]byte, 256)
			for i := range pkts {
				m := ms[r.IntN(n)]
				pkts[i] = dgram{src: m.Real.Addr(), dst: netip.MustParseAddr("10.92.0.7"), proto: ProtoUDP, l4: udpDgram(r, 1400)}.build()
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				t := tr
				if i&1 == 1 {
					t = inv
				}
				if _, err := t.Outbound(pkts[(i>>1)&255]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
