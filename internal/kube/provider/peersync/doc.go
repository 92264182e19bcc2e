// Package peersync drives a running relay from the RelayPeers of its
// namespace, the sample-controller way: an informer on the RelayPeers
// labelled with the relay's name feeds a rate-limited workqueue, and sync
// turns the whole set into the relay's peer list.
//
// The peer set is one unit: prefixes and keys must not clash across peers,
// so sync validates every RelayPeer against the relay's file configuration
// and the peers accepted before it (internal/core/config DecodePeer and WithPeer, the
// file's own decoder and validator), then applies the result through the
// relay's atomic live-apply path, the one SIGHUP uses. A RelayPeer whose
// spec does not validate gets Ready=False with the field path and message,
// and the relay keeps running its last accepted spec (or none): invalid
// input never disturbs the running state or the other peers.
//
// A second loop writes each RelayPeer's status (active path, reachability,
// paths, conditions) with server-side apply: on every transition, and
// otherwise at most every StatusRefresh per peer, so that RTT jitter does
// not hammer etcd.
package peersync
