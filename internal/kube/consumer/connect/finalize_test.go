package connect

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-relay/relay/internal/kube/consumer/peering"
)

func TestDeletionRemovesRelayPeersAndIPs(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	now := metav1.NewTime(w.clock.t)
	w.c.fccs["ab"].DeletionTimestamp = &now
	if err := w.sync("ab"); err != nil {
		t.Fatal(err)
	}
	if w.a.peer(tenA, "c-b") != nil || w.b.peer(tenB, "c-a") != nil {
		t.Error("RelayPeers left after deletion")
	}
	w.c.ipam()
	if len(w.c.ips) != 0 {
		t.Errorf("IPs left: %v", w.c.ips)
	}
	if _, ok := w.c.fccs["ab"]; ok {
		t.Error("finalizer not removed")
	}
}

func TestDeletionKeepsIPsAnotherFCCUses(t *testing.T) {
	w := newWorld(t)
	w.c.fcs["d"] = peering.ForeignCluster{ID: "d", LocalTenant: "liqo-tenant-d", RemoteTenant: "tenant-d", Role: "Provider"}
	w.addFCC("ab", "a", "b", time.Hour)
	w.addFCC("ad", "a", "d", time.Hour)
	w.settle("ab")
	ipA := RelayIPName("a", addr("10.70.0.100"))
	now := metav1.NewTime(w.clock.t)
	w.c.fccs["ab"].DeletionTimestamp = &now
	if err := w.sync("ab"); err != nil {
		t.Fatal(err)
	}
	w.c.ipam()
	if _, ok := w.c.ips[ipA]; !ok {
		t.Errorf("IP %s of a's relay deleted while FCC ad uses a", ipA)
	}
	if _, ok := w.c.ips[RelayIPName("b", addr("10.71.0.200"))]; ok {
		t.Error("IP of b's relay kept")
	}
}

func TestDeletionGivesUpOnAnUnreachableProvider(t *testing.T) {
	w := newWorld(t)
	w.r.GiveUp = 10 * time.Minute
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	w.b.down = true
	now := metav1.NewTime(w.clock.t)
	w.c.fccs["ab"].DeletionTimestamp = &now
	if _, ok := RequeueAfter(w.sync("ab")); !ok {
		t.Fatal("deletion with b down did not wait")
	}
	if w.a.peer(tenA, "c-b") != nil {
		t.Error("a's RelayPeer not deleted while b is down")
	}
	w.clock.Advance(9 * time.Minute)
	if _, ok := RequeueAfter(w.sync("ab")); !ok || w.events.has("GaveUp") {
		t.Fatal("gave up before the timeout")
	}
	w.clock.Advance(2 * time.Minute)
	if err := w.sync("ab"); err != nil {
		t.Fatal(err)
	}
	if !w.events.has("GaveUp") {
		t.Error("no GaveUp event")
	}
	if _, ok := w.c.fccs["ab"]; ok {
		t.Error("finalizer kept after giving up")
	}
}

func TestDeletionAfterThePeeringWentAway(t *testing.T) {
	w := newWorld(t)
	w.addFCC("ab", "a", "b", time.Hour)
	w.settle("ab")
	delete(w.c.fcs, "b") // unpeered: no ForeignCluster, no credentials
	now := metav1.NewTime(w.clock.t)
	w.c.fccs["ab"].DeletionTimestamp = &now
	if err := w.sync("ab"); err != nil {
		t.Fatal(err)
	}
	if w.a.peer(tenA, "c-b") != nil {
		t.Error("a's RelayPeer for b left behind")
	}
	if !w.events.has("GaveUp") {
		t.Error("no GaveUp event for the unpeered provider")
	}
	if _, ok := w.c.fccs["ab"]; ok {
		t.Error("deletion waits for a provider that is no longer a peer")
	}
}
