// Package connect is the consumer-side operator's controller: it turns a
// ForeignClusterConnection (FCC) in a Liqo consumer into one RelayPeer in
// each of the two providers, for the other provider's relay, and reports
// the connection in the FCC's status (docs/operator.md).
//
// Sync(name) is the unit of work, level-triggered and idempotent: it reads
// the world (the FCC, Liqo's objects in the consumer through Consumer, each
// provider through a Provider that Dialer connects with Liqo's credentials
// or the FCC's override Secret), computes what both RelayPeers must hold
// (consumer/podmap for the per-pod /32 mapping) and writes only the
// difference, at a bounded rate. Running it twice, or again after a crash
// halfway, writes nothing new. The Controller feeds Sync from informers and
// a workqueue; the real Consumer and Dialer are in kube.go and dial.go, and
// the unit tests drive Sync against fakes of the same interfaces.
package connect
