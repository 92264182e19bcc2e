package geneveplan

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"
)

var opts = Options{Port: 6091}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestGatewayEndsPeered(t *testing.T) {
	got := GatewayEnds(peered(), tenant, "n1", opts)
	want := []End{
		{Name: "liqo.aaaaaaaaaa", VNI: 0, Local: addr("10.80.0.3"), Remote: addr("10.244.1.1"),
			Port: 6091, MTU: 1340, Tunnel: tenant + "/provider-a-n1"},
		{Name: "liqo.bbbbbbbbbb", VNI: 1, Local: addr("10.80.0.3"), Remote: addr("172.18.0.3"),
			Port: 6091, MTU: 1340, Tunnel: tenant + "/provider-a-n2"},
	}
	if !reflect.DeepEqual(got.Ends, want) || len(got.Notes) != 0 {
		t.Fatalf("GatewayEnds:\n got %+v\nwant %+v", got, want)
	}
}

func TestNodeEndsPeered(t *testing.T) {
	for _, tc := range []struct {
		node string
		want End
	}{
		{"n1", End{Name: "liqo.ffffffffff", VNI: 0, Local: addr("10.80.0.1"), Remote: addr("10.244.1.7"),
			Port: 6091, MTU: 1340, Tunnel: tenant + "/provider-a-n1"}},
		{"n2", End{Name: "liqo.ffffffffff", VNI: 1, Local: addr("10.80.0.2"), Remote: addr("10.244.1.7"),
			Port: 6091, MTU: 1340, Tunnel: tenant + "/provider-a-n2"}},
	} {
		got := NodeEnds(peered(), tc.node, opts)
		if !reflect.DeepEqual(got.Ends, []End{tc.want}) || len(got.Notes) != 0 {
			t.Errorf("NodeEnds(%s):\n got %+v\nwant %+v", tc.node, got, tc.want)
		}
	}
}

// Both ends of a tunnel agree on the VNI, and each end's remote is the
// address the other end's side is reached at.
func TestEndsPair(t *testing.T) {
	o := peered()
	gw := GatewayEnds(o, tenant, "n1", opts).Ends
	for _, n := range o.Nodes {
		node := NodeEnds(o, n.Name, opts).Ends
		if len(node) != 1 {
			t.Fatalf("node %s: %d ends", n.Name, len(node))
		}
		var g *End
		for i := range gw {
			if gw[i].Tunnel == node[0].Tunnel {
				g = &gw[i]
			}
		}
		if g == nil {
			t.Fatalf("node %s: no gateway end for %s", n.Name, node[0].Tunnel)
		}
		if g.VNI != node[0].VNI || g.Port != node[0].Port || g.MTU != node[0].MTU {
			t.Errorf("tunnel %s: ends disagree: %+v vs %+v", g.Tunnel, *g, node[0])
		}
		if node[0].Remote != addr(o.Fabrics[0].Spec.GatewayIP.String()) {
			t.Errorf("node end remote %s, want the gateway pod IP", node[0].Remote)
		}
	}
}

func TestGatewayEndsLeftOut(t *testing.T) {
	deleting := metav1.Now()
	for _, tc := range []struct {
		name   string
		mutate func(*Objects)
		ends   int
		note   string // substring of the one note, "" for none
	}{
		{"other namespace", func(o *Objects) { o.Tunnels[1].Namespace = "elsewhere" }, 1, ""},
		{"tunnel being deleted", func(o *Objects) { o.Tunnels[1].DeletionTimestamp = &deleting }, 1, ""},
		{"internal node being deleted", func(o *Objects) { o.Nodes[1].DeletionTimestamp = &deleting }, 1, ""},
		{"no refs", func(o *Objects) { o.Tunnels[1].Spec.InternalFabricRef = nil }, 1, "internalFabricRef"},
		{"no internal node", func(o *Objects) { o.Nodes = o.Nodes[:1] }, 1, `InternalNode "n2" not found`},
		{"no internal fabric", func(o *Objects) { o.Fabrics = nil }, 0, "InternalFabric"},
		{"remote not detected", func(o *Objects) { o.Nodes[1].Status.NodeIP.Remote = nil }, 1, "no source address"},
		// Local is for a pod on that node: n2's local address is no use
		// to a pod on n1.
		{"only local on other node", func(o *Objects) {
			o.Nodes[1].Status.NodeIP.Local = o.Nodes[1].Status.NodeIP.Remote
			o.Nodes[1].Status.NodeIP.Remote = nil
		}, 1, "no source address"},
		{"bad name", func(o *Objects) { o.Nodes[1].Spec.Interface.Gateway.Name = "eth0" }, 1, "bad device name"},
		{"long name", func(o *Objects) { o.Nodes[1].Spec.Interface.Gateway.Name = "liqo.0123456789a" }, 1, "longer than 15"},
		{"bad local", func(o *Objects) { o.Fabrics[0].Spec.Interface.Gateway.IP = "" }, 0, "spec.interface.gateway.ip"},
		{"host name remote", func(o *Objects) { o.Nodes[1].Status.NodeIP.Remote = ptr.To(networkingv1beta1.IP("n2.example")) }, 1, "not an IP"},
		{"vni too big", func(o *Objects) { o.Tunnels[1].Spec.ID = MaxVNI + 1 }, 1, "24-bit"},
		{"duplicate name", func(o *Objects) { o.Nodes[1].Spec.Interface.Gateway.Name = "liqo.aaaaaaaaaa" }, 1, "already used by " + tenant + "/provider-a-n1"},
		{"duplicate vni", func(o *Objects) { o.Tunnels[1].Spec.ID = 0 }, 1, "id 0 already used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := peered()
			tc.mutate(&o)
			got := GatewayEnds(o, tenant, "n1", opts)
			if len(got.Ends) != tc.ends {
				t.Errorf("%d ends, want %d: %+v", len(got.Ends), tc.ends, got.Ends)
			}
			checkNotes(t, got.Notes, tc.note)
		})
	}
}

func TestNodeEndsLeftOut(t *testing.T) {
	deleting := metav1.Now()
	for _, tc := range []struct {
		name   string
		mutate func(*Objects)
		ends   int
		note   string
	}{
		{"label for other node", func(o *Objects) { o.Tunnels[0].Labels[consts.InternalNodeName] = "n2" }, 0, ""},
		{"label and ref disagree", func(o *Objects) { o.Tunnels[1].Labels[consts.InternalNodeName] = "n1" }, 1, "refers to InternalNode"},
		{"no label", func(o *Objects) { delete(o.Tunnels[0].Labels, consts.InternalNodeName) }, 0, ""},
		{"tunnel being deleted", func(o *Objects) { o.Tunnels[0].DeletionTimestamp = &deleting }, 0, ""},
		{"fabric being deleted", func(o *Objects) { o.Fabrics[0].DeletionTimestamp = &deleting }, 0, ""},
		{"no internal node", func(o *Objects) { o.Nodes = o.Nodes[1:] }, 0, `InternalNode "n1" not found`},
		{"no gateway ip", func(o *Objects) { o.Fabrics[0].Spec.GatewayIP = "" }, 0, "no gatewayIP"},
		{"no node ip", func(o *Objects) { o.Nodes[0].Spec.Interface.Node.IP = "" }, 0, "spec.interface.node.ip"},
		{"no node device name", func(o *Objects) { o.Fabrics[0].Spec.Interface.Node.Name = "" }, 0, "bad device name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := peered()
			tc.mutate(&o)
			got := NodeEnds(o, "n1", opts)
			if len(got.Ends) != tc.ends {
				t.Errorf("%d ends, want %d: %+v", len(got.Ends), tc.ends, got.Ends)
			}
			checkNotes(t, got.Notes, tc.note)
		})
	}
}

func checkNotes(t *testing.T, notes []Note, want string) {
	t.Helper()
	switch {
	case want == "" && len(notes) != 0:
		t.Errorf("unexpected notes %+v", notes)
	case want != "" && len(notes) == 0:
		t.Errorf("no notes, want one containing %q", want)
	}
	for _, n := range notes {
		if want != "" && !strings.Contains(n.Reason, want) {
			t.Errorf("note %+v does not contain %q", n, want)
		}
	}
}

// Options reach every end; MTU 0 stays 0 (kernel default).
func TestOptionsAndZeroMTU(t *testing.T) {
	o := peered()
	o.Fabrics[0].Spec.MTU = 0
	got := NodeEnds(o, "n2", Options{Port: 4789, DisableARP: true}).Ends
	if len(got) != 1 || got[0].Port != 4789 || !got[0].DisableARP || got[0].MTU != 0 {
		t.Fatalf("got %+v", got)
	}
	if p := got[0].LocalPrefix(); p != netip.MustParsePrefix("10.80.0.2/32") {
		t.Fatalf("LocalPrefix %s", p)
	}
}

// The same objects in any order give the same plan.
func TestOrderIndependent(t *testing.T) {
	a := peered()
	a.Nodes[1].Spec.Interface.Gateway.Name = a.Nodes[0].Spec.Interface.Gateway.Name // a duplicate to resolve
	b := a
	b.Tunnels = []networkingv1beta1.GeneveTunnel{a.Tunnels[1], a.Tunnels[0]}
	b.Nodes = []networkingv1beta1.InternalNode{a.Nodes[1], a.Nodes[0]}
	pa := GatewayEnds(a, tenant, "n1", opts)
	pb := GatewayEnds(b, tenant, "n1", opts)
	if !reflect.DeepEqual(pa, pb) || len(pa.Ends) != 1 || len(pa.Notes) != 1 {
		t.Fatalf("order changes the plan:\n%+v\n%+v", pa, pb)
	}
}
