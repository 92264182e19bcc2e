// Package multipath is the relay's multipath conn.Bind for wireguard-go.
//
// WireGuard normally sends to an address, the peer's endpoint. Here the send
// endpoint is the logical peer instead (a *PeerEndpoint, written in the UAPI
// as "endpoint=peer:NAME"), and the path that carries each packet is chosen
// inside Send from the peer's active path, one atomic load per call. The
// shell switches paths with SetActive; WireGuard never notices, so a switch
// needs no new handshake.
//
// Received datagrams keep their real source endpoint (the inner bind's), as
// paths cross NATs; WireGuard authenticates every datagram and uses the real
// source for cookies and rate limiting. Roaming must not override the choice
// of path: the shell calls device.DisableSomeRoamingForBrokenMobileSemantics
// before adding peers and creates each peer with endpoint=peer:NAME in the
// same IpcSet as its public_key (wireguard-go decides to pin the endpoint
// when the peer is created, and only if it has one by then).
//
// wireguard-go's Linux route listener only watches a bare
// *conn.StdNetBind, so neither udpbind nor a wrapped StdNetBind gets it:
// cached sticky source addresses are still cleared after rebinding and on
// handshake retries (ClearSrc), but not on route changes.
//
// The bind also carries the relay's probes on the same sockets as WireGuard,
// so they share the path's 5-tuple: datagrams matching the probe predicate
// are handed to the probe handler and hidden from WireGuard, and SendTo
// sends raw datagrams. The handler's answers, and the probes the agent
// queues in an Outbox, go out in one batch where the inner bind has
// SendBatch (udpbind: one sendmmsg to many destinations). Finally it
// attributes WireGuard transport data to peers, by learning the session
// indices of the handshakes it sends, and counts received data per peer
// and source address (RxStats): passive
// evidence that a path works. It counts a message only once WireGuard has
// authenticated it and found its counter fresh: the bind marks each
// received message's buffer with its source, and the TUN wrapper
// (WrapTUN), through which wireguard-go delivers decrypted packets in those
// same buffers, credits the source (authrx.go).
//
// A peer may have a secondary path (SetSecondary): every transport data
// message to the peer is then also sent there, and the receiving WireGuard
// keeps the first copy. The receiving bind credits the other copy to its
// own source once per counter and drops it before WireGuard
// (redundant.go).
//
// Move changes a peer's paths at a flowlet boundary: when the new paths
// deliver sooner, Send keeps using the old ones until the peer's traffic
// pauses for the delay difference, or, after failover.FlowletHold, holds
// the first packet for the new ones until it has (at most
// failover.MaxReorderGap), so that no packet overtakes one still in flight
// (flowlet.go).
package multipath
