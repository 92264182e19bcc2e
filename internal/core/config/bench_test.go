package config

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/liqo-relay/relay/internal/core/keys"
)

// largeConfig returns a valid configuration with n peers, each with two
// paths, two prefixes and a mapping.
func largeConfig(n int) []byte {
	var b strings.Builder
	b.WriteString(expand(head))
	b.WriteString("peers:\n")
	for i := range n {
		var k keys.Public
		k[0], k[1], k[2] = byte(i), byte(i>>8), 0xaa
		fmt.Fprintf(&b, `  - name: peer-%d
    publicKey: %s
    prefixes: [10.%d.%d.0/24, 172.16.%d.%d/32]
    paths:
      - {name: direct, endpoint: 192.0.2.%d:51900}
      - {name: consumer, endpoint: 'relay-%d.example.net:51900', bias: 1ms}
    seesUs: [{real: 10.244.0.0/16, as: 10.71.0.0/16}]
`, i, k, 1+i/256, i%256, i/256, i%256, i%250+1, i)
	}
	return []byte(b.String())
}

func TestLargeConfig(t *testing.T) {
	c, err := Parse(largeConfig(2000))
	if err != nil {
		t.Fatalf("%.1000v", err)
	}
	if len(c.Peers) != 2000 {
		t.Errorf("got %d peers", len(c.Peers))
	}
}

func BenchmarkParseFull(b *testing.B) {
	data, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse1000Peers(b *testing.B) {
	data := largeConfig(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
