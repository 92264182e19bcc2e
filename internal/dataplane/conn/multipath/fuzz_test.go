package multipath

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.zx2c4.com/wireguard/conn"
)

// FuzzInspect feeds arbitrary batches to the receive inspection and checks
// it against a naive reference: probes (and only probes) are hidden, other
// sizes are untouched, and data, once authenticated, is attributed exactly
// as the reference says.
func FuzzInspect(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 1, 0, 0, 0}, uint8(32), uint8(0))
	f.Add([]byte{0xF1, 1, 2, 3}, uint8(48), uint8(1))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 9}, uint8(148), uint8(2))
	f.Fuzz(func(t *testing.T, seed []byte, size, srcSel uint8) {
		srcs := []netip.AddrPort{
			netip.MustParseAddrPort("192.0.2.1:1"),
			netip.MustParseAddrPort("192.0.2.2:2"),
			netip.MustParseAddrPort("[2001:db8::3]:3"),
		}
		b := New(nopBind{})
		b.SetPeer("b", []Path{pathA})
		b.SetPeer("c", []Path{pathB})
		epB, _ := b.ParseEndpoint(EndpointString("b"))
		epC, _ := b.ParseEndpoint(EndpointString("c"))
		b.Send([][]byte{wgMessage(msgInitiation, 1, sizeInitiation)}, epB)
		b.Send([][]byte{wgMessage(msgResponse, 2, sizeResponse)}, epC)
		owner := map[uint32]string{1: "b", 2: "c"}
		var probes int
		b.SetProbeHandler(func([]byte, netip.AddrPort, *Outbox) { probes++ })

		// Build a batch of up to 8 packets from the seed.
		var bufs [][]byte
		var sizes []int
		var eps []conn.Endpoint
		for i := 0; i < 8 && len(seed) > 0; i++ {
			n := (int(size) + i*7) % 200
			p := make([]byte, n, 2048) // wireguard-go's buffers are 65535 bytes: room for the mark
			copy(p, seed)
			if len(p) >= 8 && i%2 == 0 { // steer some packets at known indices
				binary.LittleEndian.PutUint32(p[4:], uint32(i%3))
			}
			bufs = append(bufs, p)
			sizes = append(sizes, n)
			eps = append(eps, &conn.StdNetEndpoint{AddrPort: srcs[(int(srcSel)+i)%len(srcs)]})
		}
		orig := append([]int(nil), sizes...)

		want := map[string]map[netip.AddrPort]uint64{}
		wantProbes := 0
		for i, p := range bufs {
			isData := len(p) >= 32 && binary.LittleEndian.Uint32(p) == 4
			if isData {
				if name, ok := owner[binary.LittleEndian.Uint32(p[4:])]; ok {
					if want[name] == nil {
						want[name] = map[netip.AddrPort]uint64{}
					}
					want[name][eps[i].(*conn.StdNetEndpoint).AddrPort]++
				}
				continue
			}
			if len(p) > 0 && p[0] == 0xF1 {
				wantProbes++
			}
		}

		b.inspect(bufs, sizes, eps, &Outbox{})
		authenticate(b, bufs, sizes)

		hidden := 0
		for i := range sizes {
			switch {
			case sizes[i] == 0 && orig[i] != 0:
				if bufs[i][0] != 0xF1 {
					t.Fatalf("packet %d hidden but not a probe: % x", i, bufs[i][:min(8, len(bufs[i]))])
				}
				hidden++
			case sizes[i] != orig[i]:
				t.Fatalf("size %d changed from %d to %d", i, orig[i], sizes[i])
			}
		}
		if hidden != wantProbes || probes != wantProbes {
			t.Fatalf("hidden %d, handled %d, want %d probes", hidden, probes, wantProbes)
		}
		for _, name := range []string{"b", "c"} {
			got := map[netip.AddrPort]uint64{}
			for _, s := range b.RxStats(name) {
				got[s.Addr] = s.Packets
			}
			if len(got) != len(want[name]) {
				t.Fatalf("peer %s: got %v, want %v", name, got, want[name])
			}
			for a, n := range want[name] {
				if got[a] != n {
					t.Fatalf("peer %s source %v: got %d, want %d", name, a, got[a], n)
				}
			}
		}
	})
}
