package packet

// A seeded corpus of packets for the differential and round-trip tests.

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
)

// testMappings is one peer's view: of our prefixes (Real) as it sees them (As).
var testMappings = []Mapping{
	{Real: netip.MustParsePrefix("10.244.0.0/16"), As: netip.MustParsePrefix("10.71.0.0/16")},
	{Real: netip.MustParsePrefix("192.168.10.0/24"), As: netip.MustParsePrefix("172.16.5.0/24")},
	{Real: netip.MustParsePrefix("100.64.0.0/10"), As: netip.MustParsePrefix("100.0.0.0/10")},
	{Real: netip.MustParsePrefix("10.0.0.1/32"), As: netip.MustParsePrefix("10.99.0.1/32")},
	{Real: netip.MustParsePrefix("fd00:244::/48"), As: netip.MustParsePrefix("fd71:9:1::/48")},
	{Real: netip.MustParsePrefix("fd00:1:2:3::/64"), As: netip.MustParsePrefix("fdaa::/64")},
	{Real: netip.MustParsePrefix("2001:db8::/33"), As: netip.MustParsePrefix("2001:db8:8000::/33")},
}

// inverse swaps Real and As: it undoes what ms does.
func inverse(ms []Mapping) []Mapping {
	inv := make([]Mapping, len(ms))
	for i, m := range ms {
		inv[i] = Mapping{Real: m.As, As: m.Real}
	}
	return inv
}

func randIn(r *rand.Rand, p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		bit := i * 8
		switch {
		case bit+8 <= p.Bits():
		case bit < p.Bits():
			keep := byte(0xff) >> (p.Bits() - bit)
			b[i] = b[i]&^keep | byte(r.Uint32())&keep
		default:
			b[i] = byte(r.Uint32())
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// randAddr returns an address of the family, inside a Real or As prefix of
// testMappings or anywhere, so that every case mixes matches and misses.
func randAddr(r *rand.Rand, v4 bool) netip.Addr {
	var cands []netip.Prefix
	for _, m := range testMappings {
		if m.Real.Addr().Is4() == v4 {
			cands = append(cands, m.Real, m.As)
		}
	}
	if r.IntN(4) == 0 {
		if v4 {
			return randIn(r, netip.MustParsePrefix("0.0.0.0/0"))
		}
		return randIn(r, netip.MustParsePrefix("::/0"))
	}
	return randIn(r, cands[r.IntN(len(cands))])
}

// testCase is one corpus entry: a complete datagram and how it is sent.
type testCase struct {
	name     string
	full     []byte
	firstLen int // > 0: sent as two fragments split here
}

// packets returns what goes on the wire for tc.
func (tc testCase) packets(full []byte) [][]byte {
	if tc.firstLen > 0 {
		return fragment(full, tc.firstLen)
	}
	return [][]byte{full}
}

func genCase(r *rand.Rand, i int) testCase {
	v4 := r.IntN(2) == 0
	fam := "v6"
	if v4 {
		fam = "v4"
	}
	d := dgram{src: randAddr(r, v4), dst: randAddr(r, v4)}
	if !v4 {
		d.extHdrs = r.IntN(3)
	}
	kinds := []string{"tcp", "udp", "echo", "err-tcp", "err-tcp-trunc", "err-udp", "err-udp-trunc", "err-echo", "gre"}
	kind := kinds[r.IntN(len(kinds))]
	errType, icmpProto := byte(3), uint8(ProtoICMP)
	if !v4 {
		errType, icmpProto = byte(1+r.IntN(4)), ProtoICMPv6
	} else if r.IntN(3) == 0 {
		errType = 11
	}
	quote := func(proto uint8, l4 []byte, trunc bool) []byte {
		// The offending packet travelled the other way: our dst sent it to our src.
		q := dgram{src: randAddr(r, v4), dst: randAddr(r, v4), proto: proto, l4: l4}
		if !v4 {
			q.extHdrs = r.IntN(2)
		}
		if proto == ProtoUDP && v4 && r.IntN(3) == 0 {
			q.noUDPSum = true
		}
		b := q.build()
		if trunc {
			hl, _, _, _ := naiveHeaders(b)
			cut := hl + 8 + r.IntN(max(1, len(b)-hl-8))
			b = b[:cut]
		}
		return b
	}
	switch kind {
	case "tcp":
		d.proto = ProtoTCP
		if r.IntN(2) == 0 {
			d.l4 = tcpSeg(r, tcpFlagSYN, 1460, 0)
		} else {
			d.l4 = tcpSeg(r, 0x10, 0, r.IntN(200))
		}
	case "udp":
		d.proto = ProtoUDP
		d.l4 = udpDgram(r, r.IntN(200))
		d.noUDPSum = v4 && r.IntN(3) == 0
	case "echo":
		d.proto = icmpProto
		d.l4 = icmpEcho(r, v4, r.IntN(100))
	case "err-tcp", "err-tcp-trunc":
		d.proto = icmpProto
		d.l4 = icmpError(errType, 0, quote(ProtoTCP, tcpSeg(r, 0x18, 0, 8+r.IntN(60)), kind == "err-tcp-trunc"))
	case "err-udp", "err-udp-trunc":
		d.proto = icmpProto
		d.l4 = icmpError(errType, 0, quote(ProtoUDP, udpDgram(r, 8+r.IntN(60)), kind == "err-udp-trunc"))
	case "err-echo":
		d.proto = icmpProto
		d.l4 = icmpError(errType, 0, quote(icmpProto, icmpEcho(r, v4, r.IntN(40)), r.IntN(2) == 0))
	case "gre":
		d.proto = 47
		d.l4 = make([]byte, 4+r.IntN(100))
		fillRand(r, d.l4)
	}
	tc := testCase{name: fmt.Sprintf("%d-%s-%s", i, fam, kind), full: d.build()}
	// Fragment some of the non-error packets.
	if kind == "tcp" || kind == "udp" || kind == "echo" || kind == "gre" {
		if r.IntN(3) == 0 {
			unfrag := 20
			if !v4 {
				unfrag = 40
				if d.extHdrs > 0 {
					unfrag = 48 // the hop-by-hop header stays unfragmentable
				}
			}
			l4off, _, _, _ := naiveHeaders(tc.full)
			min := (l4off - unfrag + 24 + 7) &^ 7
			if rest := len(tc.full) - unfrag; rest > min {
				tc.firstLen = min + 8*r.IntN((rest-min+7)/8)
				if tc.firstLen >= rest {
					tc.firstLen = min
				}
				tc.name += "-frag"
			}
		}
	}
	return tc
}

func corpus(seed uint64, n int) []testCase {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	cs := make([]testCase, n)
	for i := range cs {
		cs[i] = genCase(r, i)
	}
	return cs
}
