package provider

import (
	"net/netip"
	"slices"
	"testing"
)

// TestHostPrefixes: the Relay publishes the relay's own addresses as host
// prefixes, never the subnet of an interface address.
func TestHostPrefixes(t *testing.T) {
	got := hostPrefixes([]netip.Prefix{netip.MustParsePrefix("100.80.0.1/24"), netip.MustParsePrefix("fd00::7/64")})
	if want := []string{"100.80.0.1/32", "fd00::7/128"}; !slices.Equal(got, want) {
		t.Errorf("hostPrefixes = %v, want %v", got, want)
	}
}
