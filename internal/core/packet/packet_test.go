package packet

import (
	"net/netip"
	"testing"
)

func TestParse(t *testing.T) {
	r := newRand(2)
	pa := netip.MustParseAddr
	big := dgram{src: pa("fd00::1"), dst: pa("fd00::2"), proto: ProtoUDP, l4: udpDgram(r, 100), extHdrs: 2}.build()
	big4 := dgram{src: pa("10.0.0.1"), dst: pa("10.0.0.2"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 100)}.build()
	fr6, fr4 := fragment(big, 40), fragment(big4, 40)
	padded := append(append([]byte(nil), big4...), 0, 0, 0, 0)
	for _, tc := range []struct {
		name     string
		pkt      []byte
		want     Header
		src, dst string
	}{
		{"v6 with hop-by-hop and dest opts", big, Header{Version: 6, Proto: ProtoUDP, L4: 56, End: len(big)}, "fd00::1", "fd00::2"},
		{"v6 first fragment", fr6[0], Header{Version: 6, Proto: ProtoUDP, L4: 64, End: len(fr6[0]), Fragmented: true}, "fd00::1", "fd00::2"},
		{"v6 later fragment", fr6[1], Header{Version: 6, Proto: protoDestOpts, L4: 56, End: len(fr6[1]), Fragmented: true, FragOffset: 5}, "fd00::1", "fd00::2"},
		{"v4", big4, Header{Version: 4, Proto: ProtoTCP, L4: 20, End: len(big4)}, "10.0.0.1", "10.0.0.2"},
		{"v4 padded", padded, Header{Version: 4, Proto: ProtoTCP, L4: 20, End: len(big4)}, "10.0.0.1", "10.0.0.2"},
		{"v4 first fragment", fr4[0], Header{Version: 4, Proto: ProtoTCP, L4: 20, End: 60, Fragmented: true}, "10.0.0.1", "10.0.0.2"},
		{"v4 later fragment", fr4[1], Header{Version: 4, Proto: ProtoTCP, L4: 20, End: len(fr4[1]), Fragmented: true, FragOffset: 5}, "10.0.0.1", "10.0.0.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Parse(tc.pkt)
			if err != nil {
				t.Fatal(err)
			}
			if h != tc.want {
				t.Fatalf("got %+v\nwant %+v", h, tc.want)
			}
			if bytesAddr(h.Src(tc.pkt)) != pa(tc.src) || bytesAddr(h.Dst(tc.pkt)) != pa(tc.dst) {
				t.Fatalf("addresses %v -> %v", bytesAddr(h.Src(tc.pkt)), bytesAddr(h.Dst(tc.pkt)))
			}
			if h.HasL4() != (h.FragOffset == 0) {
				t.Fatalf("HasL4 = %v", h.HasL4())
			}
		})
	}
}

func TestParseEmbeddedTruncated(t *testing.T) {
	r := newRand(3)
	p := dgram{src: netip.MustParseAddr("fd00::1"), dst: netip.MustParseAddr("fd00::2"), proto: ProtoTCP, l4: tcpSeg(r, 0, 0, 10), extHdrs: 2}.build()
	for _, tc := range []struct {
		cut       int
		proto     uint8
		l4        int
		truncated bool
	}{
		{len(p), ProtoTCP, 56, false},
		{70, ProtoTCP, 56, true},
		{52, protoDestOpts, 52, true}, // the dest opts header is cut: no L4
		{44, protoHopByHop, 44, true},
	} {
		var h Header
		err := h.parseEmbedded(p[:tc.cut])
		if err != nil {
			t.Fatalf("cut %d: %v", tc.cut, err)
		}
		if h.Proto != tc.proto || h.L4 != tc.l4 || h.Truncated != tc.truncated || h.End != tc.cut {
			t.Fatalf("cut %d: %+v", tc.cut, h)
		}
	}
	if err := new(Header).parseEmbedded(p[:39]); err == nil {
		t.Fatal("a cut fixed header parsed")
	}
}
