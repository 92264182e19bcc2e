package labservices

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"10.0.0.1-10.0.0.3", ""},
		{"10.0.0.3-10.0.0.1", "before the first"},
		{"10.0.0.1", "want FIRST-LAST"},
		{"10.0.0.1-fd00::1", "different families"},
		{"x-10.0.0.1", "first address"},
	} {
		_, _, err := ParseRange(c.in)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseRange(%q) = %v, want error containing %q", c.in, err, c.err)
		}
	}
}

func TestPool(t *testing.T) {
	a := netip.MustParseAddr
	p := NewPool(a("10.0.0.1"), a("10.0.0.2"))
	got, err := p.Take("ns/one", netip.Addr{})
	if err != nil || got != a("10.0.0.1") {
		t.Fatalf("first Take = %v, %v", got, err)
	}
	if again, _ := p.Take("ns/one", netip.Addr{}); again != got {
		t.Errorf("an owner's second Take = %v, want its address %v", again, got)
	}
	if _, err := p.Take("ns/two", a("10.0.0.1")); err == nil || !strings.Contains(err.Error(), "taken by ns/one") {
		t.Errorf("Take of a taken address: %v", err)
	}
	if _, err := p.Take("ns/two", a("10.0.0.9")); err == nil || !strings.Contains(err.Error(), "outside the pool") {
		t.Errorf("Take outside the pool: %v", err)
	}
	if got, _ := p.Take("ns/two", netip.Addr{}); got != a("10.0.0.2") {
		t.Errorf("second owner got %v", got)
	}
	if _, err := p.Take("ns/three", netip.Addr{}); err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("Take from a full pool: %v", err)
	}
	if r, ok := p.Release("ns/one"); !ok || r != a("10.0.0.1") {
		t.Errorf("Release = %v, %v", r, ok)
	}
	if got, _ := p.Take("ns/three", netip.Addr{}); got != a("10.0.0.1") {
		t.Errorf("a released address is reused: got %v", got)
	}
	// An owner moving to the address it asks for frees the old one.
	if got, err := p.Take("ns/three", a("10.0.0.1")); err != nil || got != a("10.0.0.1") {
		t.Errorf("Take of the owned address = %v, %v", got, err)
	}
}
