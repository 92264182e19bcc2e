package pipe

import (
	"net/netip"
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	base := func() Rules {
		return Rules{
			Peers:   []PeerRules{{Name: "b", Prefixes: []netip.Prefix{pp("10.72.0.0/16")}}},
			Local:   []netip.Prefix{pp("10.244.0.0/16"), pp("10.255.0.1/32")},
			Exports: []netip.Prefix{pp("10.244.0.0/16")},
			Relay4:  pa("10.255.0.1"),
			MTU:     1420,
		}
	}
	for _, tc := range []struct {
		name string
		mod  func(*Rules)
		want []string // substrings; empty = valid
	}{
		{"valid", func(*Rules) {}, nil},
		{"no mtu", func(r *Rules) { r.MTU = 0 }, nil},
		{"empty name", func(r *Rules) { r.Peers[0].Name = "" }, []string{"peers[0].name: empty"}},
		{"same prefix twice", func(r *Rules) {
			r.Peers = append(r.Peers, PeerRules{Name: "c", Prefixes: []netip.Prefix{pp("10.72.1.0/16")}})
		}, []string{`peers[1].prefixes[0]: 10.72.0.0/16 already routed to peer "b"`}},
		{"invalid prefix", func(r *Rules) { r.Peers[0].Prefixes = append(r.Peers[0].Prefixes, netip.Prefix{}) }, []string{"peers[0].prefixes[1]: invalid"}},
		{"export outside local", func(r *Rules) { r.Exports = append(r.Exports, pp("10.0.0.0/8")) }, []string{"exports[1]: 10.0.0.0/8 is not inside local"}},
		{"relay4 outside local", func(r *Rules) { r.Relay4 = pa("10.9.9.9") }, []string{"relay4: 10.9.9.9"}},
		{"relay6 is v4", func(r *Rules) { r.Relay6 = pa("10.244.0.1") }, []string{"relay6: 10.244.0.1"}},
		{"mtu small", func(r *Rules) { r.MTU = 500 }, []string{"mtu: 500 out of range"}},
		{"mtu v4 minimum", func(r *Rules) { r.MTU = 576 }, nil},
		{"all at once", func(r *Rules) { r.MTU, r.Relay4, r.Local[0] = 70000, pa("1.1.1.1"), netip.Prefix{} }, []string{"mtu: 70000", "relay4: 1.1.1.1", "local[0]: invalid", "exports[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.mod(&r)
			c, err := Compile(r)
			if len(tc.want) == 0 {
				if err != nil || c == nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Compile accepted invalid rules")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestCompiledAccessors(t *testing.T) {
	c := testRules(t)
	if name, ok := c.Peer(pa("10.72.3.4")); !ok || name != "b" {
		t.Errorf("Peer(10.72.3.4) = %q, %v", name, ok)
	}
	if _, ok := c.Peer(pa("1.1.1.1")); ok {
		t.Error("Peer(1.1.1.1) found")
	}
	if !c.Exports().Contains(pa("10.244.9.9")) || c.Exports().Contains(pa("10.255.0.1")) {
		t.Error("Exports wrong")
	}
}
