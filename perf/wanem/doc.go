// Package wanem is the pure core of liqo-relay's userspace WAN emulator:
// what happens to one direction of a link, decided per frame from the
// frame's size, its arrival time and seeded randomness.
//
// A Direction applies, in this order: cut (drop everything), random loss,
// bursty Gilbert-Elliott loss, a token-bucket rate limit with a bounded
// backlog, then a delay with uniform jitter. Like netem without reordering,
// a frame's due time is never earlier than the previous frame's, so jitter
// never reorders frames. A Queue holds the frames that are waiting for
// their due time, in preallocated slots the caller reads into.
//
// Nothing here reads a clock, starts a goroutine or touches a socket: time
// is an argument, randomness is a seeded *rand.Rand. The AF_PACKET bridge
// that moves real frames through a Direction is perf/wanem/bridge.
package wanem
