package podmap

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

// The running example of docs/liqo-addressing.md: C's external CIDR
// 10.70.0.0/16 is seen by A as 10.92.0.0/16 and by B as 10.94.0.0/16; C
// sees A's pods 10.244.0.0/16 as 10.71.0.0/16 and B's as 10.72.0.0/16.
var (
	provA = Provider{Name: "a", External: Remap{pfx("10.70.0.0/16"), pfx("10.92.0.0/16")},
		Pods: []Remap{{pfx("10.244.0.0/16"), pfx("10.71.0.0/16")}}}
	provB = Provider{Name: "b", External: Remap{pfx("10.70.0.0/16"), pfx("10.94.0.0/16")},
		Pods: []Remap{{pfx("10.244.0.0/16"), pfx("10.72.0.0/16")}}}
)

func TestComputeExample(t *testing.T) {
	res, err := Compute(provA, provB, []Pod{
		{Name: "ns/q", Consumer: addr("10.71.1.5"), Ext: addr("10.70.0.11")}, // A's pod 10.244.1.5
		{Name: "ns/p", Consumer: addr("10.72.2.7"), Ext: addr("10.70.0.12")}, // B's pod 10.244.2.7
		{Name: "ns/local", Consumer: addr("10.244.9.9"), Ext: addr("10.70.0.13")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		A: Side{Prefixes: []netip.Prefix{pfx("10.92.0.12/32")}, SeesUs: []Mapping{{pfx("10.244.1.5/32"), pfx("10.94.0.11/32")}}},
		B: Side{Prefixes: []netip.Prefix{pfx("10.94.0.11/32")}, SeesUs: []Mapping{{pfx("10.244.2.7/32"), pfx("10.92.0.12/32")}}},
	}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("Compute =\n%v\nwant\n%v", res, want)
	}
}

func TestComputeSkips(t *testing.T) {
	res, err := Compute(provA, provB, []Pod{
		{Name: "ns/pending", Consumer: addr("10.71.1.6")},
		{Name: "ns/odd", Consumer: addr("10.72.1.6"), Ext: addr("192.168.1.1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.A.Prefixes)+len(res.B.Prefixes) != 0 || len(res.Skipped) != 2 ||
		!strings.Contains(res.Skipped[0], "ns/odd") || !strings.Contains(res.Skipped[1], "no external address") {
		t.Errorf("result %+v, want nothing mapped and two reasons", res)
	}
}

func TestComputeRejectsBadCIDRs(t *testing.T) {
	bad := provA
	bad.External.Seen = pfx("10.92.0.0/24")
	if _, err := Compute(bad, provB, nil); err == nil || !strings.Contains(err.Error(), "provider a") {
		t.Errorf("err = %v, want one naming provider a", err)
	}
}

// TestComputeInvariants checks, on seeded random churn, the rule the relays
// rely on (docs/config.md): the seesUs "as" of one side are exactly the
// other side's prefixes, every entry is a host route, and the result does
// not depend on the order of the pods.
func TestComputeInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var pods []Pod
		for i := range rng.IntN(300) {
			side := []string{"10.71", "10.72", "10.99"}[rng.IntN(3)]
			p := Pod{Name: fmt.Sprintf("ns/p%d", i), Consumer: addr(fmt.Sprintf("%s.%d.%d", side, rng.IntN(256), rng.IntN(256)))}
			if rng.IntN(10) > 0 {
				p.Ext = addr(fmt.Sprintf("10.70.%d.%d", i/256, i%256))
			}
			pods = append(pods, p)
		}
		res, err := Compute(provA, provB, pods)
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range []struct{ from, to Side }{{res.A, res.B}, {res.B, res.A}} {
			var as []netip.Prefix
			for _, m := range pair.from.SeesUs {
				as = append(as, m.As)
				if m.Real.Bits() != 32 || m.As.Bits() != 32 {
					t.Fatalf("round %d: mapping %v is not /32", round, m)
				}
			}
			slices.SortFunc(as, netip.Prefix.Compare)
			got := slices.Clone(pair.to.Prefixes)
			slices.SortFunc(got, netip.Prefix.Compare)
			if !slices.Equal(as, got) {
				t.Fatalf("round %d: seesUs as %v != other side's prefixes %v", round, as, got)
			}
		}
		rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		again, _ := Compute(provA, provB, pods)
		if fmt.Sprint(again) != fmt.Sprint(res) {
			t.Fatalf("round %d: result depends on pod order", round)
		}
	}
}

func TestRemapMask(t *testing.T) {
	for _, tc := range []struct{ a, p, want string }{
		{"10.70.1.2", "10.92.0.0/16", "10.92.1.2"},
		{"10.70.1.2", "10.92.128.0/17", "10.92.129.2"},
		{"10.70.1.2", "10.0.0.0/8", "10.70.1.2"},
		{"fd00::1:2", "fd99::/16", "fd99::1:2"},
	} {
		if got := remapMask(addr(tc.a), pfx(tc.p)); got != addr(tc.want) {
			t.Errorf("remapMask(%s, %s) = %s, want %s", tc.a, tc.p, got, tc.want)
		}
	}
}

func BenchmarkCompute5000(b *testing.B) {
	var pods []Pod
	for i := range 5000 {
		pods = append(pods, Pod{Name: fmt.Sprintf("ns/p%d", i), Consumer: addr(fmt.Sprintf("10.%d.%d.%d", 71+i%2, i/256%256, i%256)),
			Ext: addr(fmt.Sprintf("10.70.%d.%d", i/256, i%256))})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(provA, provB, pods); err != nil {
			b.Fatal(err)
		}
	}
}
