// Package linkem emulates a WAN link for UDP on the loopback interface.
//
// A Link listens on 127.0.0.1 and forwards every datagram it receives to a
// fixed target, delayed, jittered, randomly dropped or blackholed as its
// Config says. Each distinct client gets its own upstream socket, so the
// target sees a different source address and port than the client used: the
// link rewrites addresses like a NAT, which is what a path through a
// consumer cluster looks like to a relay. Replies from the target travel back
// the same way, through the same delay line.
//
// Links are meant for in-process tests and for `relay demo`; they are not a
// precise network simulator. Each direction is a single FIFO delay line:
// a packet's due time is max(arrival+delay+jitter, previous due time), as in
// netem without reordering, so jitter never reorders packets.
package linkem
