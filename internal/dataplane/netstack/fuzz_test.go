package netstack

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// FuzzNetstackWrite feeds arbitrary bytes from "the network" into a Netstack
// with own addresses and exports: the admission filter and gVisor's parsers
// behind it must neither panic nor fail the write.
func FuzzNetstackWrite(f *testing.F) {
	f.Add(echo4Packet(ownA4.Addr(), ownB4.Addr(), 1, 1))
	f.Add(echo6Packet(ownA6.Addr(), ownB6.Addr(), 1, 1))
	f.Add(udp4Packet(ownA4.Addr(), netip.MustParseAddr("10.99.0.1"), 53))
	f.Add([]byte{0x45})
	f.Add([]byte{0x60, 0, 0, 0, 0, 8, 58, 64})
	n, err := New(Options{
		Addresses: []netip.Prefix{ownB4, ownB6},
		Exports:   []netip.Prefix{exportV4, exportV6},
		// Never reach real services with fuzzed flows.
		Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("fuzz: no dialing")
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { n.Close() })
	f.Fuzz(func(t *testing.T, pkt []byte) {
		if _, err := n.Write([][]byte{pkt}, 0); err != nil {
			t.Fatalf("Write: %v", err)
		}
	})
}
