//go:build linux

package liqonet

import (
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// TestManagerPinsPerPeer: a source is pinned only towards the peer that maps
// it. 10.244.1.5 is mapped by peer a only; its connection to a's prefix is
// pinned (mark on the connection, so the fwmark rule sends it to the relay),
// its connection to b's prefix is not: b does not know the source, so it
// keeps Liqo's path (docs/config.md). Packets come from a pod namespace
// through the gateway's prerouting, as on a Liqo gateway.
func TestManagerPinsPerPeer(t *testing.T) {
	ns := gatewayNS(t)
	pod := netns.New(t, "lqpod")
	netns.Veth(t, ns, "10.244.1.1/24", pod, "10.244.1.5/24")
	pod.Run(t, "ip", "route", "add", "default", "via", "10.244.1.1")
	ns.Run(t, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	// Liqo's path in main, the relay's in its table: both forward, so that
	// each connection is confirmed in conntrack.
	for _, dst := range []string{"10.92.0.0/16", "10.93.0.0/16"} {
		ns.Run(t, "ip", "route", "add", dst, "dev", "liqo-tunnel")
		ns.Run(t, "ip", "route", "add", dst, "dev", "relay0", "table", "1900")
	}
	m := newManager(t, ns, nil)
	for _, step := range []error{
		m.SetMapped("a", mustPrefixes("10.244.1.5/32")),
		m.SetPeer("a", mustPrefixes("10.92.0.12/32"), true),
		m.SetMapped("b", mustPrefixes("10.244.1.6/32")),
		m.SetPeer("b", mustPrefixes("10.93.0.7/32"), true),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	dsts := []string{"10.92.0.12", "10.93.0.7"}
	if err := pod.Do(func() error {
		for _, d := range dsts {
			c, err := net.Dial("udp4", d+":80")
			if err != nil {
				return err
			}
			_, err = c.Write([]byte("x"))
			c.Close()
			if err != nil {
				return fmt.Errorf("send to %s: %w", d, err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	marks := map[string]uint32{}
	waitUntil(t, "both connections are in conntrack", func() bool {
		if err := ns.Do(func() error {
			fl, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
			for _, f := range fl {
				src, _ := netip.AddrFromSlice(f.Forward.SrcIP)
				if src.Unmap() == netip.MustParseAddr("10.244.1.5") {
					marks[f.Forward.DstIP.String()] = f.Mark
				}
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return len(marks) == len(dsts)
	})
	if got := marks["10.92.0.12"]; got&0x40000000 == 0 {
		t.Errorf("connection from 10.244.1.5 (mapped by a) to a's 10.92.0.12 has mark %#x: not pinned", got)
	}
	if got := marks["10.93.0.7"]; got&0x40000000 != 0 {
		t.Errorf("connection from 10.244.1.5 (mapped by a only) to b's 10.93.0.7 has mark %#x: pinned to the relay, though b does not map the source", got)
	}
}
