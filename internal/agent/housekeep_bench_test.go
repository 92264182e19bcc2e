package agent

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/keys"
)

// BenchmarkHousekeep250Peers is one housekeeping round (every 100 ms) of a
// relay with 250 idle peers x 4 paths, the hub of perf's scale-star at
// 1000 directed paths: per-peer Bind counters, idleness, passive evidence,
// the metrics that moved. The agent is built but not run, so the round is
// all there is.
func BenchmarkHousekeep250Peers(b *testing.B) {
	const peers, paths = 250, 4
	key := func(i int) keys.Private {
		var k keys.Private
		k[1], k[2], k[3] = byte(i), byte(i>>8), 1
		return k
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0") // a free port for the hub
	if err != nil {
		b.Fatal(err)
	}
	port := pc.LocalAddr().(*net.UDPAddr).Port
	pc.Close()
	var y strings.Builder
	fmt.Fprintf(&y, "name: hub\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [100.80.0.1/32]\npeers:\n", key(0).Reveal(), port)
	for i := 1; i <= peers; i++ {
		fmt.Fprintf(&y, "  - name: p%03d\n    publicKey: %s\n    prefixes: [10.%d.%d.0/24]\n    paths:\n", i, key(i).PublicKey(), i>>8, i&255)
		for j := range paths {
			fmt.Fprintf(&y, "      - {name: path%d, endpoint: \"127.0.%d.%d:%d\"}\n", j, j, i&255, 40000+i)
		}
	}
	cfg, err := config.Parse([]byte(y.String()))
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(cfg, Options{AdminAddr: "-"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	now := time.Unix(1000, 0)
	for range 30 { // past engine.PeerIdleAfter: every peer idle, as in scale-star
		now = now.Add(housekeepingInterval)
		a.housekeep(now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		now = now.Add(housekeepingInterval)
		a.housekeep(now)
	}
}
