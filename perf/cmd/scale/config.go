package main

import (
	"fmt"
	"strings"

	"github.com/liqo-relay/relay/internal/demo/mesh"
)

// Every relay's config is rendered here rather than by
// mesh.Federation.RenderConfig: the "direct" path goes straight to the
// peer's port on 127.0.0.1, with no linkem hop in between, which a
// Federation path always has.

// writeHead writes relay r's config up to its peers: list.
func writeHead(b *strings.Builder, r *mesh.Relay, health string) {
	fmt.Fprintf(b, "name: %s\nprivateKey: %s\nlistenPort: %d\nmode: netstack\naddresses: [%s]\nexports: [%s]\n",
		r.Name, r.Key.Reveal(), r.Port, r.Overlay, r.Exports)
	if health != "" {
		fmt.Fprintf(b, "health: %s\n", health)
	}
	b.WriteString("peers:\n")
}

// writePeer writes peer p as seen from relay `from`: its "direct" path to
// p's port on loopback, then one path through each of hops.
func writePeer(b *strings.Builder, from string, p *mesh.Relay, hops []*mesh.Path) {
	fmt.Fprintf(b, "  - name: %s\n    publicKey: %s\n    prefixes: [%s, %s]\n    paths:\n", p.Name, p.Key.PublicKey(), p.Overlay, p.Exports)
	fmt.Fprintf(b, "      - {name: direct, endpoint: \"127.0.0.1:%d\"}\n", p.Port)
	for _, h := range hops {
		fmt.Fprintf(b, "      - {name: %s, endpoint: \"%s\"}\n", h.Name, h.Endpoint(from))
	}
}

// meshConfig renders relay i's config in the full mesh: every other relay
// is a peer, with "direct" and "consumer", the pair's linkem hop.
func meshConfig(relays []*mesh.Relay, i int, consumer map[[2]int]*mesh.Path, health string) string {
	r := relays[i]
	var b strings.Builder
	writeHead(&b, r, health)
	for j, p := range relays {
		if j != i {
			writePeer(&b, r.Name, p, []*mesh.Path{consumer[[2]int{i, j}]})
		}
	}
	return b.String()
}

// starConfig renders relay i's config in the star: the hub (0) has every
// spoke as a peer, a spoke only the hub; each pair has "direct" and the
// spoke's hops (hops[spoke]).
func starConfig(relays []*mesh.Relay, hops [][]*mesh.Path, i int, health string) string {
	r := relays[i]
	var b strings.Builder
	writeHead(&b, r, health)
	if i == 0 {
		for s := 1; s < len(relays); s++ {
			writePeer(&b, r.Name, relays[s], hops[s])
		}
	} else {
		writePeer(&b, r.Name, relays[0], hops[i])
	}
	return b.String()
}
