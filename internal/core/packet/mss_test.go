package packet

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
)

// synWithOptions builds a TCP segment whose options are opts (padded to a
// multiple of 4 with end-of-options).
func synWithOptions(flags byte, opts []byte) []byte {
	for len(opts)%4 != 0 {
		opts = append(opts, tcpOptEnd)
	}
	b := make([]byte, 20+len(opts))
	binary.BigEndian.PutUint16(b[0:], 40000)
	binary.BigEndian.PutUint16(b[2:], 443)
	b[12] = byte((20+len(opts))/4) << 4
	b[13] = flags
	copy(b[20:], opts)
	return b
}

func mssOf(t *testing.T, p []byte) int {
	t.Helper()
	h, err := Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	tcp := h.L4Bytes(p)
	opts := tcp[20 : int(tcp[12]>>4)*4]
	for i := 0; i < len(opts); {
		switch opts[i] {
		case tcpOptEnd:
			return -1
		case tcpOptNOP:
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 {
			return -1
		}
		if opts[i] == tcpOptMSS && i+4 <= len(opts) {
			return int(binary.BigEndian.Uint16(opts[i+2:]))
		}
		i += int(opts[i+1])
	}
	return -1
}

func TestClampMSS(t *testing.T) {
	v4s, v4d := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	v6s, v6d := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	mss := func(v uint16) []byte { return []byte{tcpOptMSS, 4, byte(v >> 8), byte(v)} }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name    string
		v6      bool
		flags   byte
		opts    []byte
		want    int // MSS after clamping, -1 = none
		changed bool
	}{
		{"syn lowered", false, tcpFlagSYN, mss(1460), 1380, true},
		{"syn-ack lowered", false, tcpFlagSYN | 0x10, mss(1460), 1380, true},
		{"already small", false, tcpFlagSYN, mss(1200), 1200, false},
		{"equal", false, tcpFlagSYN, mss(1380), 1380, false},
		{"not syn", false, 0x10, mss(1460), 1460, false},
		{"after nop and wscale", false, tcpFlagSYN, cat([]byte{1, 3, 3, 7}, mss(9000)), 1380, true},
		{"odd offset", false, tcpFlagSYN, cat([]byte{1}, mss(9000)), 1380, true},
		{"after sack-permitted+timestamps", false, tcpFlagSYN, cat([]byte{4, 2, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8}, mss(65535)), 1380, true},
		{"no mss", false, tcpFlagSYN, []byte{1, 1, 4, 2}, -1, false},
		{"after end of options", false, tcpFlagSYN, cat([]byte{0}, mss(9000)), -1, false},
		{"bad option length", false, tcpFlagSYN, cat([]byte{8, 0}, mss(9000)), -1, false},
		{"option runs past header", false, tcpFlagSYN, []byte{1, 1, 2, 8}, -1, false},
		{"v6 lowered", true, tcpFlagSYN, mss(1440), 1360, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dgram{src: v4s, dst: v4d, proto: ProtoTCP, l4: synWithOptions(tc.flags, tc.opts)}
			if tc.v6 {
				d.src, d.dst, d.extHdrs = v6s, v6d, 1
			}
			p := d.build()
			orig := append([]byte(nil), p...)
			if got := ClampMSS(p, 1380, 1360); got != tc.changed {
				t.Fatalf("ClampMSS = %v, want %v", got, tc.changed)
			}
			if !tc.changed && !bytes.Equal(p, orig) {
				t.Fatal("unchanged packet was modified")
			}
			if tc.want >= 0 {
				if got := mssOf(t, p); got != tc.want {
					t.Fatalf("MSS = %d, want %d", got, tc.want)
				}
			}
			if !checksumsValid(p) {
				t.Fatal("invalid TCP checksum after clamping")
			}
		})
	}
}

func TestClampMSSIgnores(t *testing.T) {
	r := newRand(5)
	syn := synWithOptions(tcpFlagSYN, []byte{tcpOptMSS, 4, 0x23, 0x28})
	v4 := dgram{src: netip.MustParseAddr("10.0.0.1"), dst: netip.MustParseAddr("10.0.0.2"), proto: ProtoTCP, l4: syn}.build()
	udp := dgram{src: netip.MustParseAddr("10.0.0.1"), dst: netip.MustParseAddr("10.0.0.2"), proto: ProtoUDP, l4: udpDgram(r, 30)}.build()
	big := dgram{src: netip.MustParseAddr("10.0.0.1"), dst: netip.MustParseAddr("10.0.0.2"), proto: ProtoTCP, l4: append(syn, make([]byte, 64)...)}.build()
	for _, tc := range []struct {
		name string
		pkt  []byte
		m4   int
	}{
		{"udp", udp, 1380},
		{"disabled", v4, 0},
		{"truncated", v4[:30], 1380},
		{"non-first fragment", fragment(big, 32)[1], 1380},
		{"garbage", []byte{0x45, 1, 2}, 1380},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := append([]byte(nil), tc.pkt...)
			if ClampMSS(p, tc.m4, 1360) || !bytes.Equal(p, tc.pkt) {
				t.Fatal("packet was clamped")
			}
		})
	}
	// The first fragment of a SYN carries the option and is clamped.
	first := fragment(big, 32)[0]
	if !ClampMSS(first, 1380, 1360) || mssOf(t, first) != 1380 {
		t.Fatal("first fragment not clamped")
	}
}

func BenchmarkClampMSS(b *testing.B) {
	syn := dgram{src: netip.MustParseAddr("10.0.0.1"), dst: netip.MustParseAddr("10.0.0.2"), proto: ProtoTCP,
		l4: synWithOptions(tcpFlagSYN, []byte{tcpOptMSS, 4, 0x05, 0xb4})}.build()
	ack := dgram{src: netip.MustParseAddr("10.0.0.1"), dst: netip.MustParseAddr("10.0.0.2"), proto: ProtoTCP,
		l4: tcpSeg(newRand(1), 0x10, 0, 1000)}.build()
	b.Run("ack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ClampMSS(ack, 1380, 1360)
		}
	})
	b.Run("syn", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			binary.BigEndian.PutUint16(syn[42:], 1460)
			ClampMSS(syn, 1380, 1360)
		}
	})
}
