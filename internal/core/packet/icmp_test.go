package packet

import (
	"bytes"
	"net/netip"
	"testing"
)

func TestRewriteForeignICMPSource(t *testing.T) {
	r := newRand(11)
	pp, pa := netip.MustParsePrefix, netip.MustParseAddr
	local := NewSet([]netip.Prefix{pp("10.244.0.0/16"), pp("fd00:244::/48"), pp("10.255.0.1/32"), pp("fd00:ff::1/128")})
	relay4, relay6 := pa("10.255.0.1"), pa("fd00:ff::1")
	q4 := dgram{src: pa("10.71.0.5"), dst: pa("10.244.0.6"), proto: ProtoUDP, l4: udpDgram(r, 10)}.build()
	q6 := dgram{src: pa("fd71::5"), dst: pa("fd00:244::6"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 10)}.build()
	icmp4 := func(src string, typ byte) []byte {
		return dgram{src: pa(src), dst: pa("10.71.0.5"), proto: ProtoICMP, l4: icmpError(typ, 0, q4)}.build()
	}
	icmp6 := func(src string, typ byte) []byte {
		return dgram{src: pa(src), dst: pa("fd71::5"), proto: ProtoICMPv6, l4: icmpError(typ, 0, q6), extHdrs: 1}.build()
	}
	echo := dgram{src: pa("192.168.1.1"), dst: pa("10.71.0.5"), proto: ProtoICMP, l4: icmpEcho(r, true, 8)}.build()
	for _, tc := range []struct {
		name    string
		pkt     []byte
		r4, r6  netip.Addr
		wantSrc string // "" = unchanged
	}{
		{"v4 node unreachable", icmp4("192.168.1.1", 3), relay4, relay6, "10.255.0.1"},
		{"v4 router time exceeded", icmp4("172.18.0.1", 11), relay4, relay6, "10.255.0.1"},
		{"v4 param problem", icmp4("172.18.0.1", 12), relay4, relay6, "10.255.0.1"},
		{"v4 local source", icmp4("10.244.3.3", 3), relay4, relay6, ""},
		{"v4 echo is no error", echo, relay4, relay6, ""},
		{"v4 no relay address", icmp4("192.168.1.1", 3), netip.Addr{}, relay6, ""},
		{"v6 packet too big", icmp6("fe80::1", 2), relay4, relay6, "fd00:ff::1"},
		{"v6 unreachable", icmp6("2001:db8::1", 1), relay4, relay6, "fd00:ff::1"},
		{"v6 local", icmp6("fd00:244::1", 3), relay4, relay6, ""},
		{"v6 no relay address", icmp6("2001:db8::1", 1), relay4, netip.Addr{}, ""},
		{"v6 echo", dgram{src: pa("2001:db8::1"), dst: pa("fd71::5"), proto: ProtoICMPv6, l4: icmpEcho(r, false, 8)}.build(), relay4, relay6, ""},
		{"malformed", icmp4("192.168.1.1", 3)[:27], relay4, relay6, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := append([]byte(nil), tc.pkt...)
			got := RewriteForeignICMPSource(p, local, tc.r4, tc.r6)
			if got != (tc.wantSrc != "") {
				t.Fatalf("rewritten = %v, want %v", got, tc.wantSrc != "")
			}
			if tc.wantSrc == "" {
				if !bytes.Equal(p, tc.pkt) {
					t.Fatal("packet modified")
				}
				return
			}
			src, _ := addrsOf(p)
			if bytesAddr(src) != pa(tc.wantSrc) {
				t.Fatalf("source = %v, want %s", bytesAddr(src), tc.wantSrc)
			}
			if !checksumsValid(p) {
				t.Fatal("invalid checksums")
			}
		})
	}
}
