package multipath

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/conn"
)

// Overhead of our Send over the inner bind's: the inner bind does nothing,
// so the difference is what the multipath indirection costs per call.
func BenchmarkSendOverhead(b *testing.B) {
	for _, batch := range []int{1, conn.IdealBatchSize} {
		bufs := make([][]byte, batch)
		for i := range bufs {
			bufs[i] = wgMessage(msgTransport, 5, 1440)
		}
		inner := nopBind{}
		innerEP, _ := inner.ParseEndpoint(pathA.Addr.String())
		ours := New(inner)
		ours.SetPeer("b", []Path{pathB, pathA})
		ours.SetActive("b", 1)
		ourEP, _ := ours.ParseEndpoint(EndpointString("b"))
		for _, c := range []struct {
			name string
			bind conn.Bind
			ep   conn.Endpoint
		}{{"inner", inner, innerEP}, {"ours", ours, ourEP}} {
			b.Run(c.name+"/batch="+itoa(batch), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					c.bind.Send(bufs, c.ep)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/pkt")
			})
		}
	}
}

// Overhead of our receive wrapper: probe diversion and data attribution
// over a batch the inner receive function "read" without I/O.
func BenchmarkReceiveOverhead(b *testing.B) {
	const batch = conn.IdealBatchSize
	bufs := make([][]byte, batch)
	sizes := make([]int, batch)
	eps := make([]conn.Endpoint, batch)
	src := &conn.StdNetEndpoint{AddrPort: pathA.Addr}
	for i := range bufs {
		// wireguard-go's receive buffers (device.MaxMessageSize), with
		// room for the mark beyond the message.
		bufs[i] = make([]byte, 65535)
		copy(bufs[i], wgMessage(msgTransport, 5, 1440))
		eps[i] = src
	}
	inner := conn.ReceiveFunc(func(bufs [][]byte, sz []int, _ []conn.Endpoint) (int, error) {
		for i := range sz {
			sz[i] = 1440
		}
		return len(bufs), nil
	})
	ours := New(nopBind{})
	ours.SetPeer("b", []Path{pathA})
	ep, _ := ours.ParseEndpoint(EndpointString("b"))
	ours.Send([][]byte{wgMessage(msgInitiation, 5, sizeInitiation)}, ep)
	for _, c := range []struct {
		name string
		fn   conn.ReceiveFunc
	}{{"inner", inner}, {"ours", ours.wrapReceive(inner)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.fn(bufs, sizes, eps)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/pkt")
		})
	}
	// Data is credited only once WireGuard has authenticated it (on the
	// TUN write, authrx.go); the receive path marks it with its source.
	for i := range bufs {
		if binary.LittleEndian.Uint64(bufs[i][markOffset(1440):]) != ours.secret {
			b.Fatalf("packet %d was not marked", i)
		}
	}
}

// Send over real loopback sockets: conn.NewStdNetBind() alone and wrapped.
func BenchmarkSendLoopback(b *testing.B) {
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	to := sink.LocalAddr().(*net.UDPAddr).AddrPort()
	const batch = 64
	bufs := make([][]byte, batch)
	for i := range bufs {
		bufs[i] = wgMessage(msgTransport, 5, 1440)
	}
	for _, wrap := range []bool{false, true} {
		name := "std"
		if wrap {
			name = "ours"
		}
		b.Run(name, func(b *testing.B) {
			var bind conn.Bind = conn.NewStdNetBind()
			var ep conn.Endpoint
			if wrap {
				ours := New(bind)
				ours.SetPeer("sink", []Path{{"direct", to}})
				bind = ours
				ep, _ = ours.ParseEndpoint(EndpointString("sink"))
			} else {
				ep, _ = bind.ParseEndpoint(to.String())
			}
			if _, _, err := bind.Open(0); err != nil {
				b.Fatal(err)
			}
			defer bind.Close()
			b.ReportAllocs()
			b.SetBytes(batch * 1440)
			for b.Loop() {
				if err := bind.Send(bufs, ep); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/pkt")
		})
	}
}

// Throughput of two devices over ChannelTUN and loopback UDP, with our bind
// and with conn.NewDefaultBind(). ChannelTUN moves one packet at a time
// through unbuffered channels, so absolute numbers are low; the comparison
// is what matters. The share of packets not lost in the kernel is reported
// as "delivered", and the goodput until the last one arrived as Mbit/s.
func BenchmarkDeviceThroughput(b *testing.B) {
	for _, ours := range []bool{false, true} {
		name := "default"
		if ours {
			name = "ours"
		}
		b.Run(name, func(b *testing.B) {
			x := newNode(b, "x", 11, "10.9.3.1", ours)
			y := newNode(b, "y", 111, "10.9.3.2", ours)
			x.addPeer(b, y, []Path{{"direct", y.addr()}})
			y.addPeer(b, x, []Path{{"direct", x.addr()}})
			ping(b, x, y)
			pkt := ipv4Packet(x.ip, y.ip, 1400)
			b.SetBytes(int64(len(pkt)))
			b.ResetTimer()
			go func() {
				for range b.N {
					x.tun.Outbound <- pkt
				}
			}()
			got := 0
			start, lastRecv := time.Now(), time.Now()
			stall := time.NewTicker(500 * time.Millisecond)
			defer stall.Stop()
			last := -1
		loop:
			for got < b.N {
				select {
				case <-y.tun.Inbound:
					got++
					lastRecv = time.Now()
				case <-stall.C:
					if got == last {
						break loop // the rest was lost
					}
					last = got
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(got)/float64(b.N), "delivered")
			// Goodput up to the last packet received, so the wait that
			// detects lost packets does not count.
			b.ReportMetric(float64(got*len(pkt)*8)/lastRecv.Sub(start).Seconds()/1e6, "Mbit/s")
		})
	}
}

// ipv4Packet builds a UDP-in-IPv4 packet of n bytes; WireGuard checks only
// the version, length and source address.
func ipv4Packet(src, dst netip.Addr, n int) []byte {
	p := make([]byte, n)
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(n))
	p[8] = 64
	p[9] = 17
	s, d := src.As4(), dst.As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	return p
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
