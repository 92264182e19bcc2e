package vxlanlink

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
)

// namespace is a throwaway network namespace, made with `ip netns add` and
// removed when the test ends.
type namespace struct {
	name string
	h    *netlink.Handle
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip binary")
	}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func newNamespace(t *testing.T, tag string) *namespace {
	t.Helper()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "gs-" + tag + "-" + hex.EncodeToString(b)
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return &namespace{name: name, h: h}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestRootPair makes the two ends of one tunnel between a "node" and a
// "gateway pod" namespace joined by a veth pair (the underlay), routes the
// peer's address over it as Liqo's RouteConfigurations do, and pings
// across; then checks re-sync, re-creation, conflicts and the cleanup.
func TestRootPair(t *testing.T) {
	requireRoot(t)
	node, pod := newNamespace(t, "node"), newNamespace(t, "pod")
	run(t, "ip", "-n", node.name, "link", "add", "veth0", "type", "veth", "peer", "name", "eth0", "netns", pod.name)
	run(t, "ip", "-n", node.name, "addr", "add", "192.0.2.1/24", "dev", "veth0")
	run(t, "ip", "-n", pod.name, "addr", "add", "192.0.2.2/24", "dev", "eth0")
	run(t, "ip", "-n", node.name, "link", "set", "veth0", "up")
	run(t, "ip", "-n", pod.name, "link", "set", "eth0", "up")

	nodeEnd := geneveplan.End{Name: "liqo.nodeend01", VNI: 7, Local: netip.MustParseAddr("10.80.0.1"),
		Remote: netip.MustParseAddr("192.0.2.2"), Port: 6091, MTU: 1340, Tunnel: "t/n1"}
	podEnd := geneveplan.End{Name: "liqo.podend001", VNI: 7, Local: netip.MustParseAddr("10.80.0.3"),
		Remote: netip.MustParseAddr("192.0.2.1"), Port: 6091, MTU: 1340, Tunnel: "t/n1"}
	nl, pl := New(node.h, quietLog()), New(pod.h, quietLog())

	if _, err := nl.Sync([]geneveplan.End{nodeEnd}); err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			t.Skipf("no vxlan in this kernel: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := pl.Sync([]geneveplan.End{podEnd}); err != nil {
		t.Fatal(err)
	}
	// Liqo's routes: fabric's "<gateway ip>/32 dev <node end> scope link"
	// and the gateway's "<node ip>/32 dev <gateway end> scope link".
	run(t, "ip", "-n", node.name, "route", "add", "10.80.0.3/32", "dev", nodeEnd.Name, "scope", "link")
	run(t, "ip", "-n", pod.name, "route", "add", "10.80.0.1/32", "dev", podEnd.Name, "scope", "link")
	ping(t, node.name, "10.80.0.3")

	// In sync: a second Sync changes nothing.
	for _, c := range []struct {
		l *Links
		e geneveplan.End
	}{{nl, nodeEnd}, {pl, podEnd}} {
		ch, err := c.l.Sync([]geneveplan.End{c.e})
		if err != nil || !ch.Empty() {
			t.Fatalf("re-sync: %v, %v", ch, err)
		}
	}
	got, err := nl.Observe()
	if err != nil || len(got) != 1 {
		t.Fatalf("Observe: %+v, %v", got, err)
	}
	want := geneveplan.Device{Name: nodeEnd.Name, Kind: "vxlan", Owned: true, VNI: 7,
		Remote: nodeEnd.Remote, Port: 6091, MTU: 1340, Up: true,
		Addrs: []netip.Prefix{netip.MustParsePrefix("10.80.0.1/32")}}
	if d := got[0]; d.Name != want.Name || d.Kind != want.Kind || !d.Owned || d.VNI != want.VNI ||
		d.Remote != want.Remote || d.Port != want.Port || d.MTU != want.MTU || !d.Up || d.NoARP ||
		len(d.Addrs) != 1 || d.Addrs[0] != want.Addrs[0] {
		t.Fatalf("observed %+v, want %+v", d, want)
	}

	// A new VNI on both ends re-creates them; the routes go with the old
	// devices and are put back, as Liqo's route controller would.
	nodeEnd.VNI, podEnd.VNI = 8, 8
	if ch, err := nl.Sync([]geneveplan.End{nodeEnd}); err != nil || len(ch.Create) != 1 || len(ch.Delete) != 1 {
		t.Fatalf("re-create: %v, %v", ch, err)
	}
	if _, err := pl.Sync([]geneveplan.End{podEnd}); err != nil {
		t.Fatal(err)
	}
	run(t, "ip", "-n", node.name, "route", "add", "10.80.0.3/32", "dev", nodeEnd.Name, "scope", "link")
	run(t, "ip", "-n", pod.name, "route", "add", "10.80.0.1/32", "dev", podEnd.Name, "scope", "link")
	ping(t, node.name, "10.80.0.3")

	// A device the stand-in did not make keeps its name, and is neither
	// changed nor removed (a veth: the lab's kernel has no dummy).
	run(t, "ip", "-n", node.name, "link", "add", "liqo.foreign01", "type", "veth", "peer", "name", "foreign-peer")
	foreign := nodeEnd
	foreign.Name, foreign.VNI = "liqo.foreign01", 9
	_, err = nl.Sync([]geneveplan.End{nodeEnd, foreign})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Sync over a veth: %v, want ErrConflict", err)
	}

	removed, err := nl.RemoveOwned()
	if err != nil || len(removed) != 1 || removed[0] != nodeEnd.Name {
		t.Fatalf("RemoveOwned: %v, %v", removed, err)
	}
	left, err := nl.Observe()
	if err != nil || len(left) != 1 || left[0].Name != "liqo.foreign01" || left[0].Owned {
		t.Fatalf("after RemoveOwned: %+v, %v", left, err)
	}
}

func ping(t *testing.T, ns, dst string) {
	t.Helper()
	if _, err := exec.LookPath("ping"); err != nil {
		t.Log("no ping binary: data path not checked")
		return
	}
	run(t, "ip", "netns", "exec", ns, "ping", "-c", "2", "-i", "0.2", "-W", "2", dst)
}
