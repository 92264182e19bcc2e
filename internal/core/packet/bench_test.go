package packet

import (
	"net/netip"
	"testing"
)

// BenchmarkTranslate measures one translation per packet, alternating
// Outbound with the mapping and with its inverse so that every iteration
// rewrites (and the packet stays bounded). Target: < 30 ns, 0 allocs.
func BenchmarkTranslate(b *testing.B) {
	r := newRand(1)
	pa := netip.MustParseAddr
	tr, inv := mustTranslator(b, testMappings), mustTranslator(b, inverse(testMappings))
	for _, bc := range []struct {
		name string
		pkt  []byte
	}{
		{"v4-tcp", dgram{src: pa("10.244.1.1"), dst: pa("10.72.2.2"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 1400)}.build()},
		{"v4-udp", dgram{src: pa("10.244.1.1"), dst: pa("10.72.2.2"), proto: ProtoUDP, l4: udpDgram(r, 1400)}.build()},
		{"v6-tcp", dgram{src: pa("fd00:244::1:1"), dst: pa("fd72::2:2"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 1400)}.build()},
		{"v4-icmp-error", dgram{src: pa("10.244.1.1"), dst: pa("10.72.2.2"), proto: ProtoICMP,
			l4: icmpError(3, 3, dgram{src: pa("10.72.2.2"), dst: pa("10.244.1.1"), proto: ProtoUDP, l4: udpDgram(r, 20)}.build())}.build()},
		{"v4-miss", dgram{src: pa("192.0.2.1"), dst: pa("10.72.2.2"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 1400)}.build()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := bc.pkt
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				t := tr
				if i&1 == 1 {
					t = inv
				}
				if _, err := t.Outbound(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	p := dgram{src: netip.MustParseAddr("fd00::1"), dst: netip.MustParseAddr("fd00::2"), proto: ProtoTCP,
		l4: tcpSeg(newRand(1), 0x10, 0, 100), extHdrs: 2}.build()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestZeroAllocs keeps the per-packet functions allocation-free.
func TestZeroAllocs(t *testing.T) {
	r := newRand(4)
	pa := netip.MustParseAddr
	tr := mustTranslator(t, testMappings)
	tcp := dgram{src: pa("10.244.1.1"), dst: pa("10.71.2.2"), proto: ProtoTCP, l4: tcpSeg(r, tcpFlagSYN, 1460, 0)}.build()
	icmp := dgram{src: pa("fd00:244::1"), dst: pa("fd71:9:1::2"), proto: ProtoICMPv6,
		l4: icmpError(1, 0, dgram{src: pa("fd71:9:1::2"), dst: pa("fd00:244::1"), proto: ProtoUDP, l4: udpDgram(r, 8)}.build())}.build()
	local := NewSet([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	tbl, err := NewTable([]Entry{{Prefix: netip.MustParsePrefix("10.71.0.0/16"), Peer: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"outbound tcp":  func() { tr.Outbound(tcp) },
		"inbound tcp":   func() { tr.Inbound(tcp) },
		"outbound icmp": func() { tr.Outbound(icmp) },
		"inbound icmp":  func() { tr.Inbound(icmp) },
		"clamp":         func() { ClampMSS(tcp, 1200, 1200) },
		"foreign icmp":  func() { RewriteForeignICMPSource(icmp, local, pa("10.0.0.1"), pa("fd00::1")) },
		"lookup":        func() { tbl.LookupBytes(tcp[16:20]) },
		"malformed":     func() { tr.Outbound(tcp[:10]) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs per packet", name, n)
		}
	}
}
