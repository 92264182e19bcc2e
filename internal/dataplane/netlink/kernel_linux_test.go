//go:build linux

package netlink_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestKernelTUNCarriesRoutedPacket sends an unmarked UDP datagram to a
// reachable peer's prefix and reads it from the TUN: the whole kernel side
// of the relay (device, addresses, rule, route) in one path.
func TestKernelTUNCarriesRoutedPacket(t *testing.T) {
	e := rtNewEnv(t)
	if err := e.ns.Do(func() error {
		mtu, err := e.dev.MTU()
		if err != nil {
			return err
		}
		if mtu != 1400 { // RouteOptions.MTU overrides the creation MTU
			t.Errorf("MTU() = %d, want 1400", mtu)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if name, err := e.dev.Name(); err != nil || name != rtTestLink {
		t.Errorf("Name() = %q, %v", name, err)
	}
	t.Logf("batch size %d (above 1 when the kernel offers TUN offloads)", e.dev.BatchSize())
	if err := e.m.SetPeer("a", rtPrefixes("10.1.0.0/16"), true); err != nil {
		t.Fatal(err)
	}

	dst := netip.MustParseAddrPort("10.1.2.3:4242")
	got := make(chan netip.Addr, 1)
	readErr := make(chan error, 1)
	go func() { // exits when a packet to dst arrives or the device closes
		const offset = 16 // room for the virtio-net header
		bufs := make([][]byte, e.dev.BatchSize())
		for i := range bufs {
			bufs[i] = make([]byte, offset+65535)
		}
		sizes := make([]int, len(bufs))
		for {
			n, err := e.dev.Read(bufs, sizes, offset)
			if err != nil {
				readErr <- err
				return
			}
			for i := range n {
				pkt := bufs[i][offset : offset+sizes[i]]
				if len(pkt) >= 28 && pkt[0]>>4 == 4 && pkt[9] == 17 {
					a := netip.AddrFrom4([4]byte(pkt[16:20]))
					if binary.BigEndian.Uint16(pkt[22:24]) == dst.Port() {
						got <- a
						return
					}
				}
			}
		}
	}()
	if err := e.ns.Do(func() error {
		c, err := net.Dial("udp4", dst.String())
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("through the relay"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The timer bounds a hang; it does not measure speed.
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case a := <-got:
		if a != dst.Addr() {
			t.Errorf("packet to %v, want %v", a, dst.Addr())
		}
	case err := <-readErr:
		t.Fatalf("Read: %v", err)
	case <-timer.C:
		e.dev.Close() // unblocks the reader
		t.Fatal("no packet on the TUN")
	}
	if strings.Contains(e.ns.Run(t, "ip", "route", "get", dst.Addr().String()), "dev "+rtTestLink) == false {
		t.Error("route does not point at the TUN")
	}
}
