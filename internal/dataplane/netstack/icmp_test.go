package netstack

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// Packet builders written from the RFCs, independent of gVisor's header
// package, so the tests do not check gVisor against itself.

func csum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

func ipv4Packet(src, dst netip.Addr, proto byte, payload []byte) []byte {
	p := make([]byte, 20+len(payload))
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	p[8] = 64
	p[9] = proto
	s, d := src.As4(), dst.As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	binary.BigEndian.PutUint16(p[10:], fold(csum(0, p[:20])))
	copy(p[20:], payload)
	return p
}

func ipv6Packet(src, dst netip.Addr, next byte, payload []byte) []byte {
	p := make([]byte, 40+len(payload))
	p[0] = 0x60
	binary.BigEndian.PutUint16(p[4:], uint16(len(payload)))
	p[6] = next
	p[7] = 64
	s, d := src.As16(), dst.As16()
	copy(p[8:], s[:])
	copy(p[24:], d[:])
	copy(p[40:], payload)
	return p
}

func pseudo6(src, dst netip.Addr, next byte, length int) uint32 {
	s, d := src.As16(), dst.As16()
	sum := csum(csum(0, s[:]), d[:])
	return sum + uint32(length) + uint32(next)
}

func echo4Packet(src, dst netip.Addr, id, seq uint16) []byte {
	icmp := []byte{8, 0, 0, 0, byte(id >> 8), byte(id), byte(seq >> 8), byte(seq), 'p', 'i', 'n', 'g'}
	binary.BigEndian.PutUint16(icmp[2:], fold(csum(0, icmp)))
	return ipv4Packet(src, dst, 1, icmp)
}

func echo6Packet(src, dst netip.Addr, id, seq uint16) []byte {
	icmp := []byte{128, 0, 0, 0, byte(id >> 8), byte(id), byte(seq >> 8), byte(seq), 'p', 'i', 'n', 'g'}
	binary.BigEndian.PutUint16(icmp[2:], fold(csum(pseudo6(src, dst, 58, len(icmp)), icmp)))
	return ipv6Packet(src, dst, 58, icmp)
}

func udp4Packet(src, dst netip.Addr, port uint16) []byte {
	u := []byte{0x30, 0x39, byte(port >> 8), byte(port), 0, 12, 0, 0, 'd', 'a', 't', 'a'}
	s, d := src.As4(), dst.As4()
	sum := csum(csum(0, s[:]), d[:]) + 17 + uint32(len(u))
	binary.BigEndian.PutUint16(u[6:], fold(csum(sum, u)))
	return ipv4Packet(src, dst, 17, u)
}

// isEchoReply reports whether pkt is an echo reply from `from` to `to` with
// the given id and seq.
func isEchoReply(pkt []byte, from, to netip.Addr, id, seq uint16) bool {
	var icmp []byte
	switch {
	case len(pkt) >= 28 && pkt[0]>>4 == 4 && pkt[9] == 1:
		if netip.AddrFrom4([4]byte(pkt[12:16])) != from || netip.AddrFrom4([4]byte(pkt[16:20])) != to {
			return false
		}
		icmp = pkt[int(pkt[0]&0xf)*4:]
		if icmp[0] != 0 || fold(csum(0, icmp)) != 0 {
			return false
		}
	case len(pkt) >= 48 && pkt[0]>>4 == 6 && pkt[6] == 58:
		if netip.AddrFrom16([16]byte(pkt[8:24])) != from || netip.AddrFrom16([16]byte(pkt[24:40])) != to {
			return false
		}
		icmp = pkt[40:]
		if icmp[0] != 129 || fold(csum(pseudo6(from, to, 58, len(icmp)), icmp)) != 0 {
			return false
		}
	default:
		return false
	}
	return binary.BigEndian.Uint16(icmp[4:]) == id && binary.BigEndian.Uint16(icmp[6:]) == seq
}

func TestNetstackICMPEchoToOwnAddress(t *testing.T) {
	peer4, peer6 := netip.MustParseAddr("10.0.0.9"), netip.MustParseAddr("fd00::9")
	tests := []struct {
		name     string
		src, dst netip.Addr
		build    func(src, dst netip.Addr, id, seq uint16) []byte
	}{
		{"v4", peer4, ownB4.Addr(), echo4Packet},
		{"v6", peer6, ownB6.Addr(), echo6Packet},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := New(Options{Addresses: []netip.Prefix{ownB4, ownB6}})
			if err != nil {
				t.Fatal(err)
			}
			pkts := make(chan []byte, 16)
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 2000)
				size := make([]int, 1)
				for {
					if _, err := n.Read([][]byte{buf}, size, 0); err != nil {
						return
					}
					pkts <- append([]byte(nil), buf[:size[0]]...)
				}
			}()
			defer func() {
				n.Close()
				<-done
			}()
			id, seq := uint16(0x1234+i), uint16(7)
			if _, err := n.Write([][]byte{tt.build(tt.src, tt.dst, id, seq)}, 0); err != nil {
				t.Fatal(err)
			}
			timeout := time.After(testTimeout)
			for {
				select {
				case p := <-pkts:
					if isEchoReply(p, tt.dst, tt.src, id, seq) {
						return
					}
					// Other traffic (e.g. IPv6 MLD reports): keep looking.
				case <-timeout:
					t.Fatal("no echo reply from the own address")
				}
			}
		})
	}
}
