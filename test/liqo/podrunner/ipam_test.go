package podrunner

import (
	"errors"
	"net/netip"
	"testing"
)

func TestIPAM(t *testing.T) {
	a, err := NewIPAM(netip.MustParsePrefix("10.244.1.0/29"))
	if err != nil {
		t.Fatal(err)
	}
	if g := a.Gateway(); g != netip.MustParseAddr("10.244.1.1") {
		t.Fatalf("gateway %s", g)
	}
	var got []string
	for _, o := range []string{"a", "b", "c", "d", "e"} {
		ip, err := a.Allocate(o, netip.Addr{})
		if err != nil {
			t.Fatalf("allocating for %s: %v", o, err)
		}
		got = append(got, ip.String())
	}
	want := []string{"10.244.1.2", "10.244.1.3", "10.244.1.4", "10.244.1.5", "10.244.1.6"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("allocation %d = %s, want %s", i, got[i], want[i])
		}
	}
	if _, err := a.Allocate("f", netip.Addr{}); !errors.Is(err, ErrPoolExhausted) {
		t.Errorf("full pool: err = %v, want ErrPoolExhausted", err)
	}
	if ip, _ := a.Allocate("c", netip.Addr{}); ip.String() != "10.244.1.4" {
		t.Errorf("an owner asking again gets %s, want its 10.244.1.4", ip)
	}
	a.Release("b")
	a.Release("d")
	if ip, _ := a.Allocate("f", netip.MustParseAddr("10.244.1.5")); ip.String() != "10.244.1.5" {
		t.Errorf("a free wanted address: got %s", ip)
	}
	if ip, _ := a.Allocate("g", netip.MustParseAddr("10.244.1.4")); ip.String() != "10.244.1.3" {
		t.Errorf("a taken wanted address falls back to the lowest free: got %s", ip)
	}
	for _, bad := range []string{"10.244.1.0", "10.244.1.1", "10.244.1.7", "10.9.9.9"} {
		b, _ := NewIPAM(netip.MustParsePrefix("10.244.2.0/24"))
		if ip, _ := b.Allocate("x", netip.MustParseAddr(bad)); ip.String() != "10.244.2.2" {
			t.Errorf("unusable wanted %s: got %s, want 10.244.2.2", bad, ip)
		}
	}
	if _, err := NewIPAM(netip.MustParsePrefix("10.0.0.0/30")); err == nil {
		t.Error("a /30 is accepted")
	}
	if _, err := NewIPAM(netip.MustParsePrefix("fd00::/64")); err == nil {
		t.Error("IPv6 is accepted")
	}
}
