package agent

import (
	"net/netip"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/health"
)

// TestAdmitPathAddressBypassesBudget floods the budget decision from a
// peer's path address, exact ip:port, far beyond the per-source budget:
// every probe is admitted for verification, also after a flood from another
// port of the same IP spent that IP's tokens; other sources of that IP stay
// held to the budget.
func TestAdmitPathAddressBypassesBudget(t *testing.T) {
	path := netip.MustParseAddrPort("192.0.2.7:51820")
	mapped := netip.AddrPortFrom(netip.AddrFrom16(path.Addr().As16()), path.Port())
	idx := &probeIndex{pathAddrs: map[netip.AddrPort]struct{}{path: {}}}
	var budget probeBudget
	now := time.Unix(1000, 0)

	other := netip.AddrPortFrom(path.Addr(), 40000) // same IP, another port
	admitted := 0
	for range 10 * health.BudgetBurst {
		if idx.admit(other, &budget, now) {
			admitted++
		}
	}
	if admitted != health.BudgetBurst {
		t.Errorf("admitted %d probes from %v at one instant, want the burst %d", admitted, other, health.BudgetBurst)
	}
	for i := range 10 * health.BudgetBurst {
		for _, src := range []netip.AddrPort{path, mapped} {
			if !idx.admit(src, &budget, now) {
				t.Fatalf("probe %d from the path address %v not admitted", i, src)
			}
		}
	}
	if idx.admit(other, &budget, now) {
		t.Errorf("a probe from %v was admitted over its budget", other)
	}
}
