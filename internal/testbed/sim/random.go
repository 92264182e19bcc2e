package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// RandomCuts scatters cuts over [start, end): gaps of 5..40 s, lengths of
// 0.5..8 s.
func RandomCuts(r *rand.Rand, start, end time.Time) []Window {
	var ws []Window
	at := start.Add(time.Duration(r.Int64N(int64(20 * time.Second))))
	for at.Before(end) {
		d := 500*time.Millisecond + time.Duration(r.Int64N(int64(7500*time.Millisecond)))
		ws = append(ws, Window{at, at.Add(d)})
		at = at.Add(d + 5*time.Second + time.Duration(r.Int64N(int64(35*time.Second))))
	}
	return ws
}

// RandomLinks builds peers "peer-00".. with 2 or 3 paths each ("direct",
// "consumer", "backup"): base RTT 5..64 ms, jitter 0..4 ms, loss 0, 0.1% or
// 1%, and random cuts between start+5s and start+dur-15s (so the last ones
// are over, and detected, before the end).
func RandomLinks(seed uint64, peers int, start time.Time, dur time.Duration) map[string][]*Link {
	r := rand.New(rand.NewPCG(seed, 5))
	links := map[string][]*Link{}
	names := []string{"direct", "consumer", "backup"}
	for i := range peers {
		var ls []*Link
		for j := range 2 + r.IntN(2) {
			ls = append(ls, &Link{
				Name:   names[j],
				Base:   time.Duration(5+r.IntN(60)) * time.Millisecond,
				Jitter: time.Duration(r.IntN(5)) * time.Millisecond,
				Loss:   []float64{0, 0, 0.001, 0.01}[r.IntN(4)],
				Cuts:   RandomCuts(r, start.Add(5*time.Second), start.Add(dur-15*time.Second)),
			})
		}
		links[fmt.Sprintf("peer-%02d", i)] = ls
	}
	return links
}

// RandomTraffic gives every link of links traffic windows over [start,
// end): bursts of 1..20 s separated by silences of 0.5..10 s, drawn from
// seed, so that demand mode switches between replacing probes and probing.
func RandomTraffic(seed uint64, links map[string][]*Link, start, end time.Time) {
	r := rand.New(rand.NewPCG(seed, 11))
	peers := make([]string, 0, len(links))
	for p := range links {
		peers = append(peers, p)
	}
	slices.Sort(peers) // map order would make the draw depend on more than the seed
	for _, p := range peers {
		for _, l := range links[p] {
			at := start.Add(time.Duration(r.Int64N(int64(5 * time.Second))))
			for at.Before(end) {
				d := time.Second + time.Duration(r.Int64N(int64(19*time.Second)))
				l.Traffic = append(l.Traffic, Window{at, at.Add(d)})
				at = at.Add(d + 500*time.Millisecond + time.Duration(r.Int64N(int64(9500*time.Millisecond))))
			}
		}
	}
}
