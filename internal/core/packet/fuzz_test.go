package packet

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
)

func addCorpusSeeds(f *testing.F, n int) {
	for _, tc := range corpus(corpusSeed+2, n) {
		for _, p := range tc.packets(tc.full) {
			f.Add(p, true)
		}
	}
}

func FuzzParse(f *testing.F) {
	addCorpusSeeds(f, 50)
	f.Fuzz(func(t *testing.T, pkt []byte, embedded bool) {
		var h Header
		var err error
		if embedded {
			err = h.parseEmbedded(pkt)
		} else {
			h, err = Parse(pkt)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if h.End > len(pkt) || h.L4 > h.End || h.L4 < 20 {
			t.Fatalf("offsets out of range: %+v for %d bytes", h, len(pkt))
		}
		if !embedded && h.Truncated {
			t.Fatal("Parse reported a truncated packet")
		}
		_, _ = h.Src(pkt), h.Dst(pkt)
		if h.HasL4() {
			_ = h.L4Bytes(pkt)
		}
	})
}

// FuzzTranslate checks that translation never panics, never writes outside
// the packet (which sits inside a larger buffer), leaves rejected packets
// alone, and keeps valid checksums valid.
func FuzzTranslate(f *testing.F) {
	addCorpusSeeds(f, 200)
	tr, err := NewTranslator(testMappings)
	if err != nil {
		f.Fatal(err)
	}
	local := NewSet([]netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00:244::/48")})
	relay4, relay6 := netip.MustParseAddr("10.255.0.1"), netip.MustParseAddr("fd00:ff::1")
	const guard = 64
	f.Fuzz(func(t *testing.T, pkt []byte, out bool) {
		buf := make([]byte, guard+len(pkt)+guard)
		for i := range buf {
			buf[i] = 0xa5
		}
		copy(buf[guard:], pkt)
		p := buf[guard : guard+len(pkt)]
		validBefore := checkable(pkt)

		changed, err := apply(tr, p, out)
		if err != nil && (changed || !bytes.Equal(p, pkt)) {
			t.Fatalf("rejected packet was modified (%v)", err)
		}
		if !changed && !bytes.Equal(p, pkt) {
			t.Fatal("packet modified but not reported")
		}
		if err == nil && validBefore && !checksumsValid(p) {
			t.Fatalf("checksums invalid after translation:\n in  %x\n out %x", pkt, p)
		}
		ClampMSS(p, 1200, 1200)
		if validBefore && !checksumsValid(p) {
			t.Fatalf("checksums invalid after MSS clamp")
		}
		RewriteForeignICMPSource(p, local, relay4, relay6)
		if validBefore && !checksumsValid(p) {
			t.Fatalf("checksums invalid after ICMP source rewrite")
		}
		for i := range guard {
			if buf[i] != 0xa5 || buf[len(buf)-1-i] != 0xa5 {
				t.Fatal("wrote outside the packet")
			}
		}
	})
}

// checkable reports whether pkt is a complete datagram whose checksums the
// test reference can verify and does verify as valid.
func checkable(pkt []byte) bool {
	h, err := Parse(pkt)
	if err != nil || h.Fragmented || h.End != len(pkt) {
		return false
	}
	l4, _, end, ok := naiveHeaders(pkt)
	if !ok || l4 != h.L4 || end != h.End {
		return false // extension headers the reference does not walk
	}
	if h.Proto == ProtoICMP || h.Proto == ProtoICMPv6 {
		if b := h.L4Bytes(pkt); len(b) > 8 && isICMPError(h.Version, h.Proto, b[0]) {
			var eh Header
			err := eh.parseEmbedded(b[8:])
			if err != nil || eh.Fragmented {
				return false
			}
			if el4, _, _, ok := naiveHeaders(b[8:]); !ok || el4 != eh.L4 {
				return false
			}
		}
	}
	return checksumsValid(pkt)
}
