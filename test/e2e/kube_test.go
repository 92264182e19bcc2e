package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Generous bounds for TestE2EKubernetes: only a broken relay misses them.
// Status is written within a second of a transition
// (internal/kube/provider/peersync statusTick); failback takes the failover
// test's failbackWithin.
const (
	kubeFirstReplyWithin = 30 * time.Second
	kubeStatusWithin     = 30 * time.Second
	kubeCutWithin        = 10 * time.Second
	kubeFailbackWithin   = failbackWithin + 10*time.Second
	kubeRoutesGoneWithin = 15 * time.Second
	// apiDown is how long the API server stays down across its restart:
	// long enough for the relay's watches and status writes to fail.
	apiDown = 3 * time.Second
)

// TestE2EKubernetes: two providers, each
// with its own API server (cluster.sh, started inside the provider's
// network namespace), and a TUN relay in each namespace running `relay run
// --kubeconfig` with a ServiceAccount bound to the relay Role and no peers
// in its file. The test stands in for the consumer operator: it reads each
// Relay.status.publicKey and creates the matching RelayPeer in the other
// cluster. Then the pods ping each other and the RelayPeers show
// activePath direct; a cut of the direct link shows the consumer path (and
// Degraded) in status; restarting provider A's API server while a UDP
// stream flows loses no packet and status updates resume; deleting the
// RelayPeers removes their routes from the relays' table and the pods
// fall back to Liqo's path through the consumer.
//
// Host routes between the pods (Liqo's path) are removed until the
// deletion step, so that pings and the stream can only go through the
// relays. Figures reported: RelayPeer creation to first ping reply, cut to
// status on consumer, packets lost across the API server restart.
func TestE2EKubernetes(t *testing.T) {
	requirePing(t)
	requireK8sTools(t)
	top := NewTopology(t, Options{})
	a, b := StartProvider(t, top.A), StartProvider(t, top.B)
	top.A.NS.Run(t, "ip", "route", "del", top.B.PodCIDR, "via", cA)
	top.B.NS.Run(t, "ip", "route", "del", top.A.PodCIDR, "via", cB)

	ra, rb := a.StartRelay(t, top.B), b.StartRelay(t, top.A)
	for _, r := range []*Relay{ra, rb} {
		st, err := r.Status()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Peers) != 0 {
			t.Fatalf("%s runs %d peers before any RelayPeer exists: %s", r.Side.Name, len(st.Peers), formatPaths(st))
		}
	}
	pubA, pubB := a.PublishedKey(t), b.PublishedKey(t)
	for _, p := range []*Provider{a, b} {
		if out := p.Cluster.Kubectl(t, "-n", kubeNamespace, "get", "secret", "relay-key", "-o", "jsonpath={.data.privateKey}"); out == "" {
			t.Errorf("%s: the relay created no key Secret with a privateKey", p.Side.Name)
		}
	}

	// The consumer operator: each relay's key into a RelayPeer in the
	// other cluster.
	created := time.Now()
	a.ApplyPeer(t, top.B, a.PeerSpec(top.B, pubB))
	b.ApplyPeer(t, top.A, b.PeerSpec(top.A, pubA))
	waitFor(t, kubeFirstReplyWithin, "pod A's first ping reply from pod B", func() (bool, string) {
		out, err := ping(top.A.Pod, top.B.PodIP, 1, "-W", "1")
		return err == nil, out
	})
	firstReply := time.Since(created)
	t.Logf("RelayPeers created -> first ping reply pod A -> pod B: %v", firstReply.Round(time.Millisecond))
	mustPing(t, top.A.Pod, top.B.PodIP, 3)
	mustPing(t, top.B.Pod, top.A.PodIP, 3)
	a.WaitPeer(t, top.B, kubeStatusWithin, "active on direct", activeOn("direct", false))
	b.WaitPeer(t, top.A, kubeStatusWithin, "active on direct", activeOn("direct", false))
	out := a.Cluster.Kubectl(t, "-n", kubeNamespace, "get", "relaypeers")
	t.Logf("kubectl get relaypeers (provider-a):\n%s", out)
	if !strings.Contains(out, "ACTIVE") || !strings.Contains(out, top.B.Name) || !strings.Contains(out, "direct") {
		t.Errorf("kubectl get relaypeers does not show %s active on direct:\n%s", top.B.Name, out)
	}

	// A cut of the direct link: the status shows the consumer path.
	top.BlackholeDirect(t)
	cut := time.Now()
	v := a.WaitPeer(t, top.B, kubeCutWithin, "active on consumer, Degraded", activeOn("consumer", true))
	seen := time.Since(cut)
	t.Logf("direct link cut (%s) -> provider-a's RelayPeer status on consumer: %v (%s)", BlackholeMethod(), seen.Round(time.Millisecond), v)
	b.WaitPeer(t, top.A, kubeCutWithin, "active on consumer, Degraded", activeOn("consumer", true))
	mustPing(t, top.A.Pod, top.B.PodIP, 3)
	top.UnblackholeDirect(t)
	a.WaitPeer(t, top.B, kubeFailbackWithin, "back on direct", activeOn("direct", false))
	b.WaitPeer(t, top.A, kubeFailbackWithin, "back on direct", activeOn("direct", false))

	// Provider A's API server restarts while a stream flows pod to pod.
	startUDPEcho(t, top.B.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort))
	stream := StartStream(t, top.A.Pod, fmt.Sprintf("%s:%d", top.B.PodIP, streamPort), streamInterval)
	if _, err := stream.WaitAnsweredAfter(time.Now(), 5*time.Second); err != nil {
		t.Fatalf("the stream does not flow before the restart: %v", err)
	}
	time.Sleep(time.Second) // real: a second of stream between real relays before the restart
	restart := time.Now()
	a.RestartAPIServer(t, apiDown)
	ready := time.Now()
	t.Logf("provider-a's kube-apiserver stopped, down %v, ready again %v after the stop", apiDown, ready.Sub(restart).Round(time.Millisecond))
	if _, err := stream.WaitAnsweredAfter(ready, 5*time.Second); err != nil {
		t.Fatalf("the stream stopped across the API server restart: %v", err)
	}
	time.Sleep(2 * time.Second) // real: the stream runs on across the restarted API server
	stream.Stop()
	samples := stream.Samples()
	lost, across, sent := 0, 0, 0
	for i, s := range samples.Sent {
		if samples.Recv[i].IsZero() && !samples.Failed[uint64(i)] {
			lost++
			if !s.Before(restart) {
				across++
			}
		}
		if !s.Before(restart) {
			sent++
		}
	}
	t.Logf("UDP stream every %v: %d datagrams in all, %d from the API server's stop to the end; lost %d in all, %d across the restart; %d write errors",
		streamInterval, len(samples.Sent), sent, lost, across, samples.WriteErrs)
	if samples.WriteErrs > 0 {
		// A send that failed in the pod's own stack never reached a relay:
		// reported, not counted as lost.
		t.Logf("the pod's socket refused %d sends (first: %v); they are not counted as lost", samples.WriteErrs, samples.FirstWriteErr)
	}
	if lost > 0 {
		st := mustStatus(t, ra)
		t.Errorf("the stream lost %d datagrams (%d write errors) with only the API server restarting; relay A's paths:\n%s\nevents:\n%s",
			lost, samples.WriteErrs, formatPaths(st), formatEvents(st.Events))
	}
	// Status updates resume: a spec change made after the restart is
	// followed (the watch reconnected) and reported (status writes work).
	spec := a.PeerSpec(top.B, pubB)
	spec.Paths[1].Bias = "6ms"
	a.ApplyPeer(t, top.B, spec)
	v = a.WaitPeer(t, top.B, kubeStatusWithin, "the post-restart change observed, on direct", activeOn("direct", false))
	t.Logf("after the restart, provider-a's RelayPeer at generation %d is observed: %s", v.rp.Generation, v)

	// Deleting the RelayPeers: Liqo's path comes back first (the consumer
	// operator unpeers the relays, Liqo keeps its own), then the routes
	// leave the relays' table and the pods talk through the consumer.
	top.A.NS.Run(t, "ip", "route", "add", top.B.PodCIDR, "via", cA)
	top.B.NS.Run(t, "ip", "route", "add", top.A.PodCIDR, "via", cB)
	deleted := time.Now()
	for _, d := range []struct {
		p    *Provider
		peer *Side
	}{{a, top.B}, {b, top.A}} {
		if err := d.p.API.DeleteRelayPeer(context.Background(), kubeNamespace, d.peer.Name); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Side{top.A, top.B} {
		peer := top.Peer(s)
		waitFor(t, kubeRoutesGoneWithin, s.Name+"'s relay table without "+peer.Name+"'s routes", func() (bool, string) {
			tb := table(t, s)
			return !strings.Contains(tb, peer.PodCIDR) && !strings.Contains(tb, peer.Overlay), tb
		})
	}
	t.Logf("RelayPeers deleted -> both relays' routes gone: %v", time.Since(deleted).Round(time.Millisecond))
	for _, r := range []*Relay{ra, rb} {
		st, err := r.Status()
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Peers) != 0 {
			t.Errorf("%s still runs a peer after its RelayPeer was deleted:\n%s", r.Side.Name, formatPaths(st))
		}
	}
	route := top.A.NS.Run(t, "ip", "route", "get", top.B.PodIP, "from", top.A.PodIP, "iif", podIf(t, top.A))
	if !strings.Contains(route, "via "+cA) {
		t.Errorf("with the RelayPeer deleted, pod traffic should go via the consumer %s: %s", cA, route)
	}
	mustPing(t, top.A.Pod, top.B.PodIP, 3)
	mustPing(t, top.B.Pod, top.A.PodIP, 3)
	if _, err := a.API.GetRelayPeer(context.Background(), kubeNamespace, top.B.Name); err == nil {
		t.Errorf("RelayPeer %s still exists after its deletion", top.B.Name)
	}

	t.Logf("figures: RelayPeer creation -> first ping reply %v; cut -> status on consumer %v; lost across the API server restart %d of %d",
		firstReply.Round(time.Millisecond), seen.Round(time.Millisecond), across, sent)
	a.StopRelay(t)
	b.StopRelay(t)
}
