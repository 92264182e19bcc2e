package packet

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

const corpusSeed = 20261130

func mustTranslator(t testing.TB, ms []Mapping) *Translator {
	t.Helper()
	tr, err := NewTranslator(ms)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func apply(tr *Translator, p []byte, out bool) (bool, error) {
	if out {
		return tr.Outbound(p)
	}
	return tr.Inbound(p)
}

func TestCorpusIsValid(t *testing.T) {
	kinds := map[string]int{}
	for _, tc := range corpus(corpusSeed, 2000) {
		if !checksumsValid(tc.full) {
			t.Fatalf("%s: generated packet has bad checksums: %x", tc.name, tc.full)
		}
		k := tc.name[strings.Index(tc.name, "-")+1:]
		kinds[k]++
	}
	// Every kind of packet must be exercised, including fragments.
	for _, k := range []string{"v4-tcp", "v6-tcp", "v4-udp", "v4-udp-frag", "v6-tcp-frag", "v4-err-tcp", "v6-err-tcp-trunc",
		"v4-err-udp-trunc", "v6-err-echo", "v4-echo", "v6-gre-frag"} {
		if kinds[k] == 0 {
			t.Errorf("corpus has no %s packets (%v)", k, kinds)
		}
	}
}

// TestDifferential compares Outbound and Inbound with the naive reference
// over the seeded corpus, fragment by fragment.
func TestDifferential(t *testing.T) {
	tr := mustTranslator(t, testMappings)
	for _, dir := range []struct {
		name string
		out  bool
	}{{"outbound", true}, {"inbound", false}} {
		for _, tc := range corpus(corpusSeed, 3000) {
			want := tc.packets(refTranslate(testMappings, tc.full, dir.out))
			in := tc.packets(tc.full)
			for i, p := range in {
				orig := append([]byte(nil), p...)
				changed, err := apply(tr, p, dir.out)
				if err != nil {
					t.Fatalf("%s %s frag %d: %v\n%x", dir.name, tc.name, i, err, orig)
				}
				if !bytes.Equal(p, want[i]) {
					t.Fatalf("%s %s frag %d:\n in   %x\n got  %x\n want %x", dir.name, tc.name, i, orig, p, want[i])
				}
				if changed != !bytes.Equal(orig, want[i]) {
					t.Fatalf("%s %s frag %d: changed = %v, bytes changed = %v", dir.name, tc.name, i, changed, !changed)
				}
			}
			if tc.firstLen == 0 && !checksumsValid(in[0]) {
				t.Fatalf("%s %s: invalid checksums after translation", dir.name, tc.name)
			}
		}
	}
}

// TestRoundTrip: translating with a mapping and then with its inverse gives
// back the original bytes (for packets whose addresses are not in an As
// prefix only, which the inverse would map although the mapping did not).
func TestRoundTrip(t *testing.T) {
	tr, inv := mustTranslator(t, testMappings), mustTranslator(t, inverse(testMappings))
	changes := 0
	for _, tc := range corpus(corpusSeed+1, 3000) {
		for _, out := range []bool{true, false} {
			if !naiveRoundTrips(tc.full, out) {
				continue // an address only in the inverse's domain
			}
			for _, p := range tc.packets(tc.full) {
				orig := append([]byte(nil), p...)
				c1, err1 := apply(tr, p, out)
				c2, err2 := apply(inv, p, out)
				if err1 != nil || err2 != nil {
					t.Fatalf("%s: %v, %v", tc.name, err1, err2)
				}
				if c1 {
					changes++
				}
				if c1 && !c2 {
					t.Fatalf("%s: translated but not translated back", tc.name)
				}
				if !bytes.Equal(p, orig) {
					t.Fatalf("%s out=%v: round trip changed the packet:\n was %x\n now %x", tc.name, out, orig, p)
				}
			}
		}
	}
	if changes < 1000 {
		t.Fatalf("only %d packets changed: the corpus does not exercise translation", changes)
	}
}

// TestTwoProviders follows a packet from provider A to provider B, an ICMP
// error raised in B back to A, and checks that A sees its own packet quoted.
func TestTwoProviders(t *testing.T) {
	// A and B both use 10.244.0.0/16 for pods. B sees A's pods as 10.71/16,
	// A sees B's pods as 10.72/16.
	aForB := mustTranslator(t, []Mapping{{Real: netip.MustParsePrefix("10.244.0.0/16"), As: netip.MustParsePrefix("10.71.0.0/16")}})
	bForA := mustTranslator(t, []Mapping{{Real: netip.MustParsePrefix("10.244.0.0/16"), As: netip.MustParsePrefix("10.72.0.0/16")}})
	podA, podB := netip.MustParseAddr("10.244.1.1"), netip.MustParseAddr("10.244.2.2")
	podBasA := netip.MustParseAddr("10.72.2.2")
	podAasB := netip.MustParseAddr("10.71.1.1")
	r := newRand(1)

	sent := dgram{src: podA, dst: podBasA, proto: ProtoUDP, l4: udpDgram(r, 100)}.build()
	wire := append([]byte(nil), sent...)
	if _, err := aForB.Outbound(wire); err != nil {
		t.Fatal(err)
	}
	if s, d := addrsOf(wire); bytesAddr(s) != podAasB || bytesAddr(d) != podBasA {
		t.Fatalf("on the wire: %v -> %v", bytesAddr(s), bytesAddr(d))
	}
	if _, err := bForA.Inbound(wire); err != nil {
		t.Fatal(err)
	}
	if s, d := addrsOf(wire); bytesAddr(s) != podAasB || bytesAddr(d) != podB {
		t.Fatalf("delivered in B: %v -> %v", bytesAddr(s), bytesAddr(d))
	}
	if !checksumsValid(wire) {
		t.Fatal("bad checksums in B")
	}
	// B's node 10.244.0.1 answers with port unreachable quoting what it got.
	icmp := dgram{src: netip.MustParseAddr("10.244.0.1"), dst: podAasB, proto: ProtoICMP, l4: icmpError(3, 3, wire)}.build()
	if _, err := bForA.Outbound(icmp); err != nil {
		t.Fatal(err)
	}
	if _, err := aForB.Inbound(icmp); err != nil {
		t.Fatal(err)
	}
	if s, d := addrsOf(icmp); bytesAddr(s) != netip.MustParseAddr("10.72.0.1") || bytesAddr(d) != podA {
		t.Fatalf("error delivered in A: %v -> %v", bytesAddr(s), bytesAddr(d))
	}
	if !bytes.Equal(icmp[28:], sent) {
		t.Fatalf("A does not see its own packet quoted:\n sent   %x\n quoted %x", sent, icmp[28:])
	}
	if !checksumsValid(icmp) {
		t.Fatal("bad checksums in A")
	}
}

// TestKnownVector pins one translation to bytes checked by hand, so that the
// reference and the translator cannot agree on a shared mistake.
func TestKnownVector(t *testing.T) {
	// IPv4 UDP 10.244.1.1:1000 -> 10.72.2.2:53, 4 bytes payload "abcd".
	in, _ := hex.DecodeString("45000020000000004011" + "0000" + "0af40101" + "0a480202" + "03e80035000c0000" + "61626364")
	// Fill in checksums from scratch.
	p := dgram{src: netip.MustParseAddr("10.244.1.1"), dst: netip.MustParseAddr("10.72.2.2"), proto: ProtoUDP, l4: in[20:]}.build()
	tr := mustTranslator(t, []Mapping{{Real: netip.MustParsePrefix("10.244.0.0/16"), As: netip.MustParsePrefix("10.71.0.0/16")}})
	if _, err := tr.Outbound(p); err != nil {
		t.Fatal(err)
	}
	// Header checksum and UDP checksum of 10.71.1.1 -> 10.72.2.2, computed
	// independently (Python, RFC 1071) for 10.71.1.1 -> 10.72.2.2.
	want := "450000201234000040115108" + "0a470101" + "0a480202" + "03e80035000c" + "1f61" + "61626364"
	if got := hex.EncodeToString(p); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestNewTranslatorValidation(t *testing.T) {
	pp := netip.MustParsePrefix
	for _, tc := range []struct {
		name string
		ms   []Mapping
		want string
	}{
		{"ok", []Mapping{{pp("10.0.0.0/8"), pp("11.0.0.0/8")}, {pp("fd00::/16"), pp("fd01::/16")}}, ""},
		{"empty", nil, ""},
		{"invalid", []Mapping{{Real: pp("10.0.0.0/8")}}, "invalid prefix"},
		{"family", []Mapping{{pp("10.0.0.0/8"), pp("fd00::/8")}}, "address family"},
		{"length", []Mapping{{pp("10.0.0.0/8"), pp("11.0.0.0/16")}}, "differ in length"},
		{"real overlap", []Mapping{{pp("10.0.0.0/8"), pp("11.0.0.0/8")}, {pp("10.1.0.0/16"), pp("12.1.0.0/16")}}, "real 10.1.0.0/16 overlaps"},
		{"as overlap", []Mapping{{pp("10.0.0.0/8"), pp("11.0.0.0/8")}, {pp("12.1.0.0/16"), pp("11.1.0.0/16")}}, "as 11.1.0.0/16 overlaps"},
		{"mapped v4", []Mapping{{pp("::ffff:10.0.0.0/104"), pp("::ffff:11.0.0.0/104")}}, "IPv4-mapped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTranslator(tc.ms)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestMalformed: truncated and inconsistent packets are rejected without a
// panic and without being modified.
func TestMalformed(t *testing.T) {
	tr := mustTranslator(t, testMappings)
	r := newRand(7)
	tcp := dgram{src: netip.MustParseAddr("10.244.0.5"), dst: netip.MustParseAddr("10.71.0.6"), proto: ProtoTCP, l4: tcpSeg(r, 0x10, 0, 0)}.build()
	quoteV4 := dgram{src: netip.MustParseAddr("10.71.0.5"), dst: netip.MustParseAddr("10.244.0.6"), proto: ProtoUDP, l4: udpDgram(r, 4)}.build()
	icmpErr := dgram{src: netip.MustParseAddr("10.244.0.1"), dst: netip.MustParseAddr("10.71.0.5"), proto: ProtoICMP, l4: icmpError(3, 1, quoteV4)}.build()
	v6 := dgram{src: netip.MustParseAddr("fd00:244::1"), dst: netip.MustParseAddr("fd71:9:1::2"), proto: ProtoUDP, l4: udpDgram(r, 4), extHdrs: 2}.build()
	mod := func(p []byte, f func([]byte) []byte) []byte { return f(append([]byte(nil), p...)) }
	for _, tc := range []struct {
		name string
		pkt  []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"version", []byte{0x50, 0, 0, 0}, ErrVersion},
		{"short v4", tcp[:19], ErrMalformed},
		{"ihl too small", mod(tcp, func(b []byte) []byte { b[0] = 0x44; return b }), ErrMalformed},
		{"ihl beyond packet", mod(tcp[:24], func(b []byte) []byte { b[0] = 0x47; return b }), ErrMalformed},
		{"total length beyond packet", tcp[:len(tcp)-1], ErrMalformed},
		{"total length below header", mod(tcp, func(b []byte) []byte { b[3] = 10; b[2] = 0; return b }), ErrMalformed},
		{"tcp header cut", mod(tcp, func(b []byte) []byte { b[3] = 30; return b[:30] }), ErrMalformed},
		{"icmp error too short", mod(icmpErr, func(b []byte) []byte { b[3] = 20 + 8 + 19; return b[:47] }), ErrMalformed},
		{"icmp error quoting v6", mod(icmpErr, func(b []byte) []byte { b[28] = 0x60; return b }), ErrMalformed},
		{"short v6", v6[:39], ErrMalformed},
		{"v6 payload beyond packet", v6[:len(v6)-1], ErrMalformed},
		{"v6 ext header cut", mod(v6, func(b []byte) []byte { b[5] = 12; return b[:52] }), ErrMalformed},
		{"v6 ext header overlong", mod(v6, func(b []byte) []byte { b[41] = 200; return b }), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, out := range []bool{true, false} {
				p := append([]byte(nil), tc.pkt...)
				changed, err := apply(tr, p, out)
				if !errors.Is(err, tc.want) || changed {
					t.Fatalf("changed=%v err=%v, want %v", changed, err, tc.want)
				}
				if !bytes.Equal(p, tc.pkt) {
					t.Fatal("rejected packet was modified")
				}
			}
		})
	}
}

// naiveRoundTrips reports whether the addresses the translator looks at in p
// come back to themselves through testMappings and then its inverse.
func naiveRoundTrips(p []byte, out bool) bool {
	ok := func(b []byte) bool {
		a := bytesAddr(b)
		m, _ := naiveMap(testMappings, a, out)
		back, _ := naiveMap(inverse(testMappings), m, out)
		return back == a
	}
	src, dst := addrsOf(p)
	if out && !ok(src) || !out && !ok(dst) {
		return false
	}
	l4off, proto, end, _ := naiveHeaders(p)
	if (proto == ProtoICMP || proto == ProtoICMPv6) && end-l4off > 8 && isICMPError(p[0]>>4, proto, p[l4off]) {
		esrc, edst := addrsOf(p[l4off+8:])
		if out && !ok(edst) || !out && !ok(esrc) {
			return false
		}
	}
	return true
}

// TestUDPChecksumZero: a UDP checksum that computes to zero after
// translation must be sent as 0xffff (zero means "no checksum").
func TestUDPChecksumZero(t *testing.T) {
	tr := mustTranslator(t, testMappings)
	for _, src := range []string{"10.244.3.4", "fd00:244::3:4"} {
		s := netip.MustParseAddr(src)
		dst := netip.MustParseAddr("10.1.1.1")
		if s.Is6() {
			dst = netip.MustParseAddr("fd99::1")
		}
		l4 := udpDgram(newRand(3), 16)
		p := dgram{src: s, dst: dst, proto: ProtoUDP, l4: l4}.build()
		// Adjust a payload word so that the translated datagram sums to
		// 0xffff: add the translated checksum to it.
		want := refTranslate(testMappings, p, true)
		l4off, _, _, _ := naiveHeaders(want)
		c := uint64(binary.BigEndian.Uint16(want[l4off+6:]))
		w := uint64(binary.BigEndian.Uint16(l4[8:]))
		binary.BigEndian.PutUint16(l4[8:], fold(w+c))
		p = dgram{src: s, dst: dst, proto: ProtoUDP, l4: l4}.build()
		if _, err := tr.Outbound(p); err != nil {
			t.Fatal(err)
		}
		if got := binary.BigEndian.Uint16(p[l4off+6:]); got != 0xffff {
			t.Fatalf("%v: UDP checksum after translation = %#04x, want 0xffff", s, got)
		}
		if !checksumsValid(p) {
			t.Fatalf("%v: invalid checksum", s)
		}
	}
}

// TestManyMappings exercises the interval-table path of a translator with
// more mappings than it scans linearly, against the naive reference.
func TestManyMappings(t *testing.T) {
	var ms []Mapping
	for i := range 3 * scanLimit {
		ms = append(ms,
			Mapping{Real: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 20), As: netip.PrefixFrom(netip.AddrFrom4([4]byte{11, byte(i), 16, 0}), 20)},
			Mapping{Real: netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfd, 0, byte(i)}), 24), As: netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfd, 1, byte(i)}), 24)})
	}
	tr := mustTranslator(t, ms)
	r := newRand(99)
	addr := func(v4 bool) netip.Addr {
		m := ms[r.IntN(len(ms)/2)*2]
		if !v4 {
			m = ms[r.IntN(len(ms)/2)*2+1]
		}
		switch r.IntN(3) {
		case 0:
			return randIn(r, m.Real)
		case 1:
			return randIn(r, m.As)
		}
		return randAddr(r, v4)
	}
	for i := range 2000 {
		v4 := i%2 == 0
		p := dgram{src: addr(v4), dst: addr(v4), proto: ProtoUDP, l4: udpDgram(r, 10)}.build()
		for _, out := range []bool{true, false} {
			want := refTranslate(ms, p, out)
			got := append([]byte(nil), p...)
			if _, err := apply(tr, got, out); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("out=%v:\n in   %x\n got  %x\n want %x", out, p, got, want)
			}
		}
	}
}
