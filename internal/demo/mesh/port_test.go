package mesh

import "testing"

// freeUDPPort never hands out a port twice in one process, even though it
// closes its check socket at once: relays of one federation would
// otherwise collide on a repeated draw.
func TestFreeUDPPortNeverRepeats(t *testing.T) {
	seen := map[uint16]bool{}
	for range 1000 {
		p, err := freeUDPPort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
