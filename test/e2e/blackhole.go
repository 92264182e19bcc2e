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
// With nftables, one transaction in provider A adds a netdev table whose
// ingress and egress chains on A's end of the direct veth drop everything:
// both directions stop at the same instant (two commands in two namespaces
// would cut one direction some milliseconds before the other, and that
// skew would add to the measured interruption), and the relay's sends still
// succeed (an egress drop reports ENOBUFS only to sockets with IP_RECVERR,
// which neither the relay nor wireguard-go sets). It needs the netdev
// egress hook (Linux 5.16, nft 1.0.1). Without nft, a blackhole route to
// the other provider's direct address on both sides stands in; sends to it
// then fail locally with EINVAL, which is closer to a link-down.

// blackholeTable is the nftables table the blackhole lives in.
const blackholeTable = "e2e_blackhole"

// BlackholeMethod says how BlackholeDirect cuts: "nft-netdev-drop" or
// "blackhole-route".
func BlackholeMethod() string {
	if _, err := exec.LookPath("nft"); err == nil {
		return "nft-netdev-drop"
	}
	return "blackhole-route"
}

// BlackholeDirect makes the direct A-B link lose every packet, both ways,
// with the link up.
func (top *Topology) BlackholeDirect(t *testing.T) {
	t.Helper()
	if BlackholeMethod() == "blackhole-route" {
		for _, s := range []*Side{top.A, top.B} {
			s.NS.Run(t, "ip", "route", "add", "blackhole", top.Peer(s).Direct+"/32")
		}
		return
	}
	file := filepath.Join(t.TempDir(), "blackhole.nft")
	rules := fmt.Sprintf(`table netdev %[1]s {
	chain in {
		type filter hook ingress device %[2]q priority 0; policy drop;
	}
	chain out {
		type filter hook egress device %[2]q priority 0; policy drop;
	}
}
`, blackholeTable, top.A.DirectIf)
	if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	top.A.NS.Run(t, "nft", "-f", file)
}

// UnblackholeDirect undoes BlackholeDirect.
func (top *Topology) UnblackholeDirect(t *testing.T) {
	t.Helper()
	if BlackholeMethod() == "blackhole-route" {
		for _, s := range []*Side{top.A, top.B} {
			s.NS.Run(t, "ip", "route", "del", "blackhole", top.Peer(s).Direct+"/32")
		}
		return
	}
	top.A.NS.Run(t, "nft", "delete", "table", "netdev", blackholeTable)
}
