package webhook

import "testing"

// TestDNSBindingNamesAreUnambiguous: the ClusterRoleBinding is
// cluster-scoped and updated and deleted by name, so two gateways must
// never share one, even when their namespace and gateway names join into
// the same string; names stay valid (at most 63 characters).
func TestDNSBindingNamesAreUnambiguous(t *testing.T) {
	a, b := dnsBindingName("a-b", "c"), dnsBindingName("a", "b-c")
	if a == b {
		t.Fatalf("namespace a-b gateway c and namespace a gateway b-c share the binding name %q", a)
	}
	long := dnsBindingName("liqo-tenant-0123456789abcdef0123456789abcdef", "gw-0123456789abcdef0123456789abcdef")
	if len(long) > 63 {
		t.Fatalf("binding name %q is %d characters, over 63", long, len(long))
	}
	if got, want := dnsBindingName("ns", "gw"), "liqo-relay-dns-ns-gw-"; len(got) != len(want)+8 || got[:len(want)] != want {
		t.Fatalf("binding name %q, want %s<8 hex digits>", got, want)
	}
}
