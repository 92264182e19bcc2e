//go:build linux

package liqonet

import (
	"net/netip"
	"os"
	"testing"
)

// TestManagerRunsNoBinaries runs the manager's whole life with an empty
// PATH, as in the scratch image (docs/image.md), where no nft, ip or
// conntrack binary exists: install, pin, repair a deleted table, reset,
// remove. Everything it checks it reads over netlink too.
func TestManagerRunsNoBinaries(t *testing.T) {
	ns := gatewayNS(t) // built with ip(8), before PATH goes
	t.Setenv("PATH", "")
	m := newManager(t, ns, nil)
	var nft *nftTable
	if err := ns.Do(func() (err error) { nft, err = openNft("liqo-relay"); return err }); err != nil {
		t.Fatal(err)
	}
	defer nft.close()
	peer := []netip.Prefix{netip.MustParsePrefix("10.92.0.12/32")}
	if err := m.SetMapped("b", []netip.Prefix{netip.MustParsePrefix("10.244.1.5/32")}); err != nil {
		t.Fatalf("SetMapped: %v", err)
	}
	if err := m.SetPeer("b", peer, true); err != nil {
		t.Fatalf("SetPeer: %v", err)
	}
	if got := setElements(t, nft, "peers_b"); len(got) != 1 || got[0] != "10.92.0.12" {
		t.Errorf("@peers_b = %v, want [10.92.0.12]", got)
	}
	// Someone deletes the table: Ensure reads its absence and restores it.
	c, err := nft.conn()
	if err != nil {
		t.Fatal(err)
	}
	c.DelTable(nft.table())
	if err := c.Flush(); err != nil {
		t.Fatalf("delete the table: %v", err)
	}
	if repaired, err := m.Ensure(); err != nil || !repaired {
		t.Errorf("Ensure after the table was deleted = %v, %v; want true, nil", repaired, err)
	}
	if got := setElements(t, nft, "peers_b"); len(got) != 1 {
		t.Errorf("@peers_b after the repair = %v, want the peer back", got)
	}
	if repaired, err := m.Ensure(); err != nil || repaired {
		t.Errorf("Ensure on a settled state = %v, %v; want false, nil", repaired, err)
	}
	if err := m.SetPeer("b", peer, false); err != nil {
		t.Fatalf("withdraw: %v", err)
	}
	if got := setElements(t, nft, "peers_b"); len(got) != 0 {
		t.Errorf("@peers_b after the withdrawal = %v, want empty", got)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if ok, err := nft.exists(); err != nil || ok {
		t.Errorf("table after Close: exists = %v, %v; want false, nil", ok, err)
	}
	if os.Getenv("PATH") != "" {
		t.Fatal("PATH came back during the test")
	}
}

// setElements reads a set of the relay's table: the first address of each
// interval (interval ends left out).
func setElements(t *testing.T, n *nftTable, name string) []string {
	t.Helper()
	c, err := n.conn()
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.GetSetByName(n.table(), name)
	if err != nil {
		t.Fatalf("read set %s: %v", name, err)
	}
	elems, err := c.GetSetElements(s)
	if err != nil {
		t.Fatalf("read elements of %s: %v", name, err)
	}
	var out []string
	for _, e := range elems {
		if e.IntervalEnd {
			continue
		}
		a, _ := netip.AddrFromSlice(e.Key)
		out = append(out, a.String())
	}
	return out
}
