package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A blackhole of the direct link, unlike CutDirect, keeps the link up and
// the routes in place: packets vanish, as when a WAN path fails somewhere
// in the middle. Taking the veth down is a different, easier failure: the
// kernel flushes the link's routes, sends fail at once with an error, and
// the relay could notice a local error rather than missing answers.
//
// With nftables, each provider drops everything arriving on its end of the
// direct veth (an input-hook rule): both directions are lost silently and
// sends still succeed. Without nft, a blackhole route to the other
// provider's direct address on both sides stands in; sends to it then fail
// locally with EINVAL, which is closer to a link-down.

// blackholeTable is the nftables table the blackhole lives in.
const blackholeTable = "e2e_blackhole"

// BlackholeMethod says how BlackholeDirect cuts: "nft-drop" or
// "blackhole-route".
func BlackholeMethod() string {
	if _, err := exec.LookPath("nft"); err == nil {
		return "nft-drop"
	}
	return "blackhole-route"
}

// BlackholeDirect makes the direct A-B link lose every packet, both ways,
// with the link up.
func (top *Topology) BlackholeDirect(t *testing.T) {
	t.Helper()
	nft := BlackholeMethod() == "nft-drop"
	for _, s := range []*Side{top.A, top.B} {
		if nft {
			// One file, one transaction: the table appears with its rule.
			file := filepath.Join(t.TempDir(), "blackhole.nft")
			rules := fmt.Sprintf("table inet %s {\n\tchain in {\n\t\ttype filter hook input priority -300; policy accept;\n\t\tiifname %q drop\n\t}\n}\n",
				blackholeTable, s.DirectIf)
			if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
				t.Fatal(err)
			}
			s.NS.Run(t, "nft", "-f", file)
		} else {
			s.NS.Run(t, "ip", "route", "add", "blackhole", top.Peer(s).Direct+"/32")
		}
	}
}

// UnblackholeDirect undoes BlackholeDirect.
func (top *Topology) UnblackholeDirect(t *testing.T) {
	t.Helper()
	nft := BlackholeMethod() == "nft-drop"
	for _, s := range []*Side{top.A, top.B} {
		if nft {
			s.NS.Run(t, "nft", "delete", "table", "inet", blackholeTable)
		} else {
			s.NS.Run(t, "ip", "route", "del", "blackhole", top.Peer(s).Direct+"/32")
		}
	}
}
