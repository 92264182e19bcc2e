package udpbind

import (
	"math/rand"
	"testing"
)

func TestSegments(t *testing.T) {
	for _, c := range []struct{ n, gso, want int }{
		{0, 0, 1}, {100, 0, 1}, {100, 100, 1}, {101, 100, 2}, {1000, 100, 10}, {1001, 100, 11}, {50, 100, 1},
	} {
		if got := segments(c.n, c.gso); got != c.want {
			t.Errorf("segments(%d, %d) = %d, want %d", c.n, c.gso, got, c.want)
		}
	}
}

// TestGSOGroupsProperties checks, over random packet sizes, that the
// groups cover every packet in order and each is a valid GSO send: at most
// maxSegments packets and maxPayload bytes, every packet but the last as
// long as the first, the last no longer. And that a group ends only where
// it had to: the next packet could not have joined it.
func TestGSOGroupsProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := range 2000 {
		var lens []int
		size := 1 + rng.Intn(1500)
		for range 1 + rng.Intn(128) {
			switch rng.Intn(10) {
			case 0:
				size = 1 + rng.Intn(1500) // a new size
			case 1:
				lens = append(lens, rng.Intn(size+1)) // a short one (may be 0)
				continue
			}
			lens = append(lens, size)
		}
		maxPayload := maxIPv4Payload
		if iter%3 == 0 {
			maxPayload = 4000 + rng.Intn(4000) // the byte limit binds too
		}
		groups := gsoGroups(lens, maxPayload, nil)
		at := 0
		for gi, n := range groups {
			if n < 1 || n > maxSegments {
				t.Fatalf("lens %v: group %d has %d packets", lens, gi, n)
			}
			g := lens[at : at+n]
			total := 0
			for j, l := range g {
				total += l
				if j < n-1 && l != g[0] || l > g[0] {
					t.Fatalf("lens %v: group %d %v is not a valid GSO run", lens, gi, g)
				}
			}
			if n > 1 && total > maxPayload {
				t.Fatalf("lens %v: group %d holds %d bytes > %d", lens, gi, total, maxPayload)
			}
			at += n
			if at < len(lens) && n < maxSegments && g[n-1] == g[0] && g[0] > 0 &&
				lens[at] <= g[0] && total+lens[at] <= maxPayload {
				t.Fatalf("lens %v: group %d %v ended although %d could join", lens, gi, g, lens[at])
			}
		}
		if at != len(lens) {
			t.Fatalf("lens %v: groups %v cover %d packets", lens, groups, at)
		}
	}
}
