package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/internal/dataplane/tun"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// BenchmarkCeilingTUN measures what one packet costs to cross a TUN
// device in each direction, with no crypto: one write into a TUN device
// and one read out of one, the two crossings a tunnel pair makes per
// delivered packet (the sending relay reads the packet from its TUN, the
// receiving relay writes it into its own).
//
// In a namespace of its own, the benchmark makes two TUN devices, "in"
// and "out", turns on forwarding, and routes the destination of a
// 1400-byte IPv4/UDP packet (the packet BenchmarkCeilingAEAD seals) out
// of "out". Each op writes the packet into "in"; the kernel receives it,
// forwards it (route lookup, TTL) and queues it on "out", all inside the
// write(2) (tun_get_user delivers the packet synchronously), and the
// benchmark then reads it from "out". So an op is exactly one TUN write
// and one TUN read, plus one pass through the kernel's IPv4 forwarding,
// which a relay's packets also take on each side (to and from the pod's
// veth). Writing to a local UDP socket instead would swap the TUN read for
// a socket receive, which a relay does not do; the hairpin out of the same
// device would add ICMP redirects. One goroutine does both, so the figure
// is CPU per packet, not a pipeline's throughput.
//
// Variants:
//   - plain: a TUN without the virtio-net header (IFF_TUN|IFF_NO_PI), one
//     read(2) and one write(2) of the bare packet, as wireguard-go's
//     NativeTun does when the header is off;
//   - vnethdr: the relay's own device (internal/dataplane/tun.CreateKernel, that is
//     wireguard-go's CreateTUN: virtio-net header, TSO and USO), one packet
//     per Write and Read, as when nothing coalesces (the header is written
//     and parsed, the read is copied out of the device's buffer);
//   - vnethdr-batch: the same device, BatchSize (128) packets of one UDP
//     flow per Write, which wireguard-go's UDP GRO coalesces into a few
//     64 KiB writes; the kernel forwards them whole and Read splits them
//     again. ns/packet is the op's time over 128: the best case of the
//     offload path (the relay's TUN writes coalesce like this for TCP).
//
// ns/packet is the figure (wall time), cpu-ns/packet the process's CPU
// time per packet (BenchmarkCeilingAEAD); it needs root (a namespace, TUN devices):
//
//	go test -run '^$' -bench 'CeilingTUN' -cpu 1 ./test/bench/
func BenchmarkCeilingTUN(b *testing.B) {
	netns.RequireRoot(b)
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		b.Skipf("needs /dev/net/tun: %v", err)
	}
	ns := netns.New(b, "bceil")
	// IPv4 only (no router solicitations or MLD on the devices), and
	// forwarding without reverse-path checks: the packets' source is on
	// no route.
	ns.Run(b, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
		"net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")

	plain := newTUNPair(b, ns, 1, openPlainTUN)
	b.Run("plain", func(b *testing.B) { plain.bench(b, 1) })
	vnet := newTUNPair(b, ns, 2, openVnetTUN)
	b.Run("vnethdr", func(b *testing.B) { vnet.bench(b, 1) })
	batch := newTUNPair(b, ns, 3, openVnetTUN)
	b.Run("vnethdr-batch", func(b *testing.B) { batch.bench(b, batch.in.BatchSize()) })
}

const (
	tunMTU    = 1420 // the testbed's (perf/profile-throughput.sh)
	tunOffset = 16   // headroom before each packet, as wireguard-go leaves
	ipv4Len   = 20
	udpLen    = 8
	// tunWait bounds the warm-up round trip: a packet that does not come
	// back means the set-up is wrong, not that the machine is slow.
	tunWait = 5 * time.Second
)

// tunDev is the part of wireguard-go's tun.Device the benchmark uses.
type tunDev interface {
	Write(bufs [][]byte, offset int) (int, error)
	Read(bufs [][]byte, sizes []int, offset int) (int, error)
	BatchSize() int
	Close() error
}

// tunPair is one variant's two devices and its packet.
type tunPair struct {
	in, out tunDev
	dst     netip.Addr
	pkt     []byte // the packet written, headers and payload
}

// newTUNPair makes devices "cN-in" and "cN-out" in ns with open, gives
// them addresses 10.98.N.1/24 and 10.97.N.1/24, brings them up, and
// builds a packet from 10.98.N.2 to 10.97.N.2 (routed out of "out"). The
// devices are closed, and so deleted, when b ends.
func newTUNPair(b *testing.B, ns *netns.NS, n int, open func(name string) (tunDev, error)) *tunPair {
	b.Helper()
	p := &tunPair{dst: netip.AddrFrom4([4]byte{10, 97, byte(n), 2})}
	for _, d := range []struct {
		dev  *tunDev
		name string
		addr string
	}{
		{&p.in, fmt.Sprintf("c%d-in", n), fmt.Sprintf("10.98.%d.1/24", n)},
		{&p.out, fmt.Sprintf("c%d-out", n), fmt.Sprintf("10.97.%d.1/24", n)},
	} {
		if err := ns.Do(func() (err error) {
			*d.dev, err = open(d.name)
			return err
		}); err != nil {
			b.Fatalf("create %s: %v", d.name, err)
		}
		dev := *d.dev
		b.Cleanup(func() { _ = dev.Close() })
		ns.Run(b, "ip", "link", "set", "dev", d.name, "mtu", fmt.Sprint(tunMTU), "up")
		ns.Run(b, "ip", "addr", "add", d.addr, "dev", d.name)
	}
	p.pkt = udpPacket(netip.AddrFrom4([4]byte{10, 98, byte(n), 2}), p.dst, ceilingPacket)
	return p
}

// openVnetTUN is the relay's TUN device (wireguard-go's CreateTUN).
func openVnetTUN(name string) (tunDev, error) { return tun.CreateKernel(name, tunMTU) }

// openPlainTUN opens a TUN device without the virtio-net header or packet
// information: each read(2) and write(2) is one bare IP packet.
func openPlainTUN(name string) (tunDev, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err == nil {
		// Non-blocking, so that os.File reads through the poller and
		// Close wakes a blocked Read.
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, err)
	}
	return plainTUN{os.NewFile(uintptr(fd), "/dev/net/tun")}, nil
}

// plainTUN is a plain TUN file behind the tunDev methods: one packet per
// call.
type plainTUN struct{ f *os.File }

func (t plainTUN) Write(bufs [][]byte, offset int) (int, error) {
	total := 0
	for _, buf := range bufs {
		n, err := t.f.Write(buf[offset:])
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

func (t plainTUN) Read(bufs [][]byte, sizes []int, offset int) (int, error) {
	n, err := t.f.Read(bufs[0][offset:])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	return 1, nil
}

func (plainTUN) BatchSize() int { return 1 }
func (t plainTUN) Close() error { return t.f.Close() }

// bench runs the variant with batch packets per op and reports ns/packet.
func (p *tunPair) bench(b *testing.B, batch int) {
	// Write buffers hold a 64 KiB packet after the headroom: the GRO on
	// write appends the packets it coalesces to the first of them.
	wbufs, store := make([][]byte, batch), make([][]byte, batch)
	for i := range store {
		store[i] = make([]byte, tunOffset+65535)
		copy(store[i][tunOffset:], p.pkt)
	}
	rbufs, sizes := make([][]byte, p.out.BatchSize()), make([]int, p.out.BatchSize())
	for i := range rbufs {
		rbufs[i] = make([]byte, tunOffset+65535)
	}
	strays, reads := 0, 0
	// roundTrip writes one batch and reads until all of it is back.
	roundTrip := func() error {
		for i := range wbufs {
			// The write's GRO rewrites the headers of the packets it
			// coalesces into (lengths, checksums) and extends them: put
			// back the 28 bytes of headers and the length.
			copy(store[i][tunOffset:tunOffset+ipv4Len+udpLen], p.pkt)
			wbufs[i] = store[i][:tunOffset+len(p.pkt)]
		}
		if _, err := p.in.Write(wbufs, tunOffset); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		for got := 0; got < batch; {
			n, err := p.out.Read(rbufs, sizes, tunOffset)
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			reads++
			for i := range n {
				if p.ours(rbufs[i][tunOffset : tunOffset+sizes[i]]) {
					got++
				} else {
					strays++
				}
			}
		}
		return nil
	}
	// One round trip first, bounded: a packet that never comes back would
	// block Read for ever.
	done := make(chan error, 1)
	go func() { done <- roundTrip() }()
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(tunWait):
		_ = p.out.Close() // wakes the Read, with an error
		<-done
		b.Fatalf("no packet came back out of the TUN within %v", tunWait)
	}

	b.SetBytes(int64(batch * len(p.pkt)))
	b.ReportAllocs()
	reads = 0
	cpu := startCPU(b)
	for b.Loop() {
		if err := roundTrip(); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b, batch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/packet")
	// Above 1, the kernel kept coalesced packets whole up to the read.
	b.ReportMetric(float64(b.N*batch)/float64(reads), "packets/read")
	if strays > 0 {
		b.Logf("%d packets read that were not the benchmark's", strays)
	}
}

// ours reports whether pkt is the benchmark's packet come back: IPv4,
// UDP, its length and destination.
func (p *tunPair) ours(pkt []byte) bool {
	return len(pkt) == len(p.pkt) && pkt[0]>>4 == 4 && pkt[9] == unix.IPPROTO_UDP &&
		netip.AddrFrom4([4]byte(pkt[16:20])) == p.dst
}

// udpPacket builds an IPv4/UDP packet of size bytes from src to dst, with
// valid IPv4 and UDP checksums (wireguard-go's GRO coalesces only packets
// whose checksum it has verified), DF set, TTL 64.
func udpPacket(src, dst netip.Addr, size int) []byte {
	if size < ipv4Len+udpLen || size > 65535 {
		panic(errors.New("udpPacket: size out of range"))
	}
	pkt := make([]byte, size)
	pkt[0] = 0x45
	binary.BigEndian.PutUint16(pkt[2:], uint16(size))
	binary.BigEndian.PutUint16(pkt[6:], 0x4000) // DF
	pkt[8] = 64
	pkt[9] = unix.IPPROTO_UDP
	s, d := src.As4(), dst.As4()
	copy(pkt[12:16], s[:])
	copy(pkt[16:20], d[:])
	binary.BigEndian.PutUint16(pkt[10:], ^fold(sum16(pkt[:ipv4Len])))
	udp := pkt[ipv4Len:]
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 5201)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	for i := range udp[udpLen:] {
		udp[udpLen+i] = byte(i)
	}
	// The pseudo-header: addresses, protocol, UDP length.
	pseudo := sum16(pkt[12:20]) + unix.IPPROTO_UDP + uint32(len(udp))
	csum := ^fold(pseudo + sum16(udp))
	if csum == 0 {
		csum = 0xffff // zero means "no checksum" in UDP over IPv4
	}
	binary.BigEndian.PutUint16(udp[6:], csum)
	return pkt
}

// sum16 is the one's-complement sum of b as big-endian 16-bit words,
// unfolded; an odd last byte is padded with zero.
func sum16(b []byte) uint32 {
	var s uint32
	for ; len(b) >= 2; b = b[2:] {
		s += uint32(binary.BigEndian.Uint16(b))
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// fold folds a one's-complement sum to 16 bits.
func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
