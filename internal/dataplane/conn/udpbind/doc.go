// Package udpbind is the relay's conn.Bind on Linux UDP sockets: the
// sockets WireGuard and the health probes share.
//
// It does what wireguard-go's StdNetBind does (one IPv4 and one IPv6
// socket on the same port, recvmmsg and sendmmsg batches, UDP GSO on send
// and GRO on receive, sticky source addresses, SO_MARK), with the system
// calls made directly on preallocated message headers, and adds what the
// relay needs beyond it:
//
//   - SendBatch sends datagrams to many destinations in one sendmmsg: the
//     probes due in one step of the owner goroutine, and the answers to the
//     requests of one received batch (docs/performance.md, probing that
//     scales). StdNetBind sends to one endpoint per call.
//   - A GSO send passes each packet as its own iovec instead of copying the
//     packets into one buffer first.
//   - A receive reads a whole batch of uncoalesced datagrams in one call,
//     and expands coalesced (GRO) ones in place (segment.go); StdNetBind
//     reads at most two datagrams per call once GRO is on.
//
// On other systems New returns conn.NewStdNetBind().
package udpbind
