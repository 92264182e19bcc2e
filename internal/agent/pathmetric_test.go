package agent

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/testbed/trace"
)

// TestPathUpSeriesFromStart: every configured path has a relay_path_up
// series from the relay's start, 0 while it has never answered, so that a
// path down since start is visible, and a path a reload adds gets one too.
func TestPathUpSeriesFromStart(t *testing.T) {
	priv := trace.KeyOf(1)
	peer := trace.KeyOf(2).PublicKey()
	yaml := func(paths string) string {
		return "name: self\nprivateKey: " + priv.Reveal() + "\nlistenPort: 51820\nmode: netstack\naddresses: [100.64.0.1/32]\n" +
			"peers:\n  - name: b\n    publicKey: " + peer.String() + "\n    prefixes: [10.1.0.0/24]\n    paths:\n" + paths
	}
	cfg, err := config.Parse([]byte(yaml("      - {name: direct, endpoint: \"192.0.2.1:51820\"}\n")))
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string][]netip.AddrPort{"b": {netip.MustParseAddrPort("192.0.2.1:51820")}}
	r, _, err := newShellRelay(cfg, addrs, engine.NoFacts{}, rand.New(rand.NewPCG(1, 2)), trace.Start)
	if err != nil {
		t.Fatal(err)
	}
	a := r.(*shellRelay).a
	want := `
# HELP relay_path_up 1 if the path to the peer is up (probes answered), else 0.
# TYPE relay_path_up gauge
relay_path_up{path="direct",peer="b"} 0
`
	if err := testutil.GatherAndCompare(a.metrics.Registry(), strings.NewReader(want), "relay_path_up"); err != nil {
		t.Fatalf("at start: %v", err)
	}
	cfg2, err := config.Parse([]byte(yaml("      - {name: direct, endpoint: \"192.0.2.1:51820\"}\n      - {name: consumer, endpoint: \"192.0.2.2:51820\"}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.apply(cfg2, nil, false); err != nil {
		t.Fatal(err)
	}
	want += `relay_path_up{path="consumer",peer="b"} 0
`
	if err := testutil.GatherAndCompare(a.metrics.Registry(), strings.NewReader(want), "relay_path_up"); err != nil {
		t.Fatalf("after a reload that adds a path: %v", err)
	}
}
