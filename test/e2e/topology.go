package e2e

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// Fixed addresses of the topology. The WAN links are /24s named after the
// namespaces they join (1 = provider-a, 2 = provider-b, 3 = consumer).
const (
	aDirect   = "192.168.12.1" // provider-a on the direct A-B link
	bDirect   = "192.168.12.2" // provider-b on the direct A-B link
	aConsumer = "192.168.13.1" // provider-a on the A-consumer link
	cA        = "192.168.13.3" // consumer on the A-consumer link
	bConsumer = "192.168.23.2" // provider-b on the consumer-B link
	cB        = "192.168.23.3" // consumer on the consumer-B link

	aOverlay = "100.80.0.1" // provider-a's relay
	bOverlay = "100.80.0.2" // provider-b's relay

	relayPort = 51900
	adminAddr = "127.0.0.1:9586" // inside each provider namespace
)

// Options shape a Topology.
type Options struct {
	// Overlapping puts both pods in 10.244.0.0/16 (both at 10.244.1.10):
	// A sees B's pods as 10.72.0.0/16, B sees A's as 10.71.0.0/16.
	Overlapping bool
	// PodHopMTU, when nonzero, puts pod B behind an extra router namespace
	// whose link to the pod has this MTU; the router's own addresses
	// (192.168.99.0/24) lie outside B's exports, so the ICMP errors it raises
	// exercise the relay's ICMP source rewrite.
	PodHopMTU int
}

// Side is one provider: its namespace, its pod's namespace and the
// addresses the relays and tests need.
type Side struct {
	Name     string    // relay name: provider-a or provider-b
	NS       *netns.NS // the provider (node) namespace the relay runs in
	Pod      *netns.NS // the pod behind it
	PodIP    string    // the pod's real address
	PodCIDR  string    // the local pod CIDR as the provider routes it
	Exports  string    // the relay's exports
	Overlay  string    // the relay's overlay address
	Direct   string    // the provider's address on the direct link
	Consumer string    // the provider's address on its consumer link
	DirectIf string    // the provider's end of the direct veth
	// PeerSees is how the other provider addresses this side's pods
	// (equal to PodCIDR/Exports without overlap).
	PeerSees string
	// SeesPeerPodIP is the other side's pod as this side addresses it.
	SeesPeerPodIP string
}

// Topology is the five (or six) namespace test network of the e2e tests:
//
//	pod-a ── provider-a ══ direct ══ provider-b ── [router-b ──] pod-b
//	               └──── consumer ─────┘
//
// Providers forward, the consumer forwards between them, and each
// provider's host routes carry pod traffic to the other provider through
// the consumer (Liqo's path, the fallback when a relay withdraws its
// routes). Without overlap pod A is 10.244.1.10 (10.244.1.0/24) and pod B
// 10.244.2.10 (10.244.2.0/24).
type Topology struct {
	Consumer *netns.NS
	Router   *netns.NS // behind B, only with Options.PodHopMTU
	A, B     *Side
	opts     Options
}

// NewTopology builds the network; everything goes away in t.Cleanup.
func NewTopology(t *testing.T, opts Options) *Topology {
	t.Helper()
	netns.RequireRoot(t)
	top := &Topology{opts: opts}
	top.Consumer = netns.New(t, "cons")
	a := &Side{Name: "provider-a", NS: netns.New(t, "prov-a"), Pod: netns.New(t, "pod-a"),
		Overlay: aOverlay, Direct: aDirect, Consumer: aConsumer}
	b := &Side{Name: "provider-b", NS: netns.New(t, "prov-b"), Pod: netns.New(t, "pod-b"),
		Overlay: bOverlay, Direct: bDirect, Consumer: bConsumer}
	top.A, top.B = a, b

	if opts.Overlapping {
		a.PodIP, a.PodCIDR, a.Exports, a.PeerSees = "10.244.1.10", "10.244.1.0/24", "10.244.0.0/16", "10.71.0.0/16"
		b.PodIP, b.PodCIDR, b.Exports, b.PeerSees = "10.244.1.10", "10.244.1.0/24", "10.244.0.0/16", "10.72.0.0/16"
		a.SeesPeerPodIP, b.SeesPeerPodIP = "10.72.1.10", "10.71.1.10"
	} else {
		a.PodIP, a.PodCIDR, a.Exports, a.PeerSees = "10.244.1.10", "10.244.1.0/24", "10.244.1.0/24", "10.244.1.0/24"
		b.PodIP, b.PodCIDR, b.Exports, b.PeerSees = "10.244.2.10", "10.244.2.0/24", "10.244.2.0/24", "10.244.2.0/24"
		a.SeesPeerPodIP, b.SeesPeerPodIP = b.PodIP, a.PodIP
	}

	for _, n := range []*netns.NS{top.Consumer, a.NS, b.NS} {
		forwarding(t, n)
	}

	// WAN.
	a.DirectIf, b.DirectIf = netns.Veth(t, a.NS, aDirect+"/24", b.NS, bDirect+"/24")
	netns.Veth(t, a.NS, aConsumer+"/24", top.Consumer, cA+"/24")
	netns.Veth(t, top.Consumer, cB+"/24", b.NS, bConsumer+"/24")
	// Each provider reaches the other's consumer link through the consumer.
	top.RestoreConsumer(t, a)
	top.RestoreConsumer(t, b)

	// Pods.
	top.podLink(t, a, "")
	if opts.PodHopMTU > 0 {
		top.Router = netns.New(t, "rtr-b")
		forwarding(t, top.Router)
		netns.Veth(t, b.NS, "192.168.99.1/24", top.Router, "192.168.99.2/24")
		b.NS.Run(t, "ip", "route", "add", b.PodCIDR, "via", "192.168.99.2")
		top.Router.Run(t, "ip", "route", "add", "default", "via", "192.168.99.1")
		top.podLink(t, b, fmt.Sprint(opts.PodHopMTU))
	} else {
		top.podLink(t, b, "")
	}

	// Liqo's consumer path for pod traffic (without overlap; with overlap
	// the host cannot route the other side's pods at all, which is the
	// point of translation).
	if !opts.Overlapping {
		a.NS.Run(t, "ip", "route", "add", b.PodCIDR, "via", cA)
		b.NS.Run(t, "ip", "route", "add", a.PodCIDR, "via", cB)
		top.Consumer.Run(t, "ip", "route", "add", a.PodCIDR, "via", aConsumer)
		top.Consumer.Run(t, "ip", "route", "add", b.PodCIDR, "via", bConsumer)
	}
	return top
}

// podLink joins the side's pod to its provider (or to the router behind
// it, with mtu) and gives the pod a default route.
func (top *Topology) podLink(t *testing.T, s *Side, mtu string) {
	t.Helper()
	gw := netip.MustParsePrefix(s.PodCIDR).Addr().Next().String() // .1
	up := s.NS
	if mtu != "" {
		up = top.Router
	}
	upIf, podIf := netns.Veth(t, up, gw+"/24", s.Pod, s.PodIP+"/24")
	if mtu != "" {
		up.Run(t, "ip", "link", "set", upIf, "mtu", mtu)
		s.Pod.Run(t, "ip", "link", "set", podIf, "mtu", mtu)
	}
	s.Pod.Run(t, "ip", "route", "add", "default", "via", gw)
}

// forwarding turns the namespace into a router. Reverse-path filtering is
// off: withdrawal and failover make routes asymmetric on purpose.
func forwarding(t *testing.T, n *netns.NS) {
	t.Helper()
	n.Run(t, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	n.Run(t, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
	n.Run(t, "sysctl", "-qw", "net.ipv4.conf.default.rp_filter=0")
}

// Peer returns the other side.
func (top *Topology) Peer(s *Side) *Side {
	if s == top.A {
		return top.B
	}
	return top.A
}

// CutDirect takes the direct A-B link down (both ends lose carrier).
func (top *Topology) CutDirect(t *testing.T) {
	t.Helper()
	top.A.NS.Run(t, "ip", "link", "set", top.A.DirectIf, "down")
}

// RestoreDirect brings the direct A-B link back up.
func (top *Topology) RestoreDirect(t *testing.T) {
	t.Helper()
	top.A.NS.Run(t, "ip", "link", "set", top.A.DirectIf, "up")
}

// consumerLink is the other side's consumer link, as s routes it.
func (top *Topology) consumerLink(s *Side) string {
	if s == top.A {
		return "192.168.23.0/24"
	}
	return "192.168.13.0/24"
}

// gateway is s's neighbour on its consumer link.
func gateway(s *Side) string {
	if s.Name == "provider-a" {
		return cA
	}
	return cB
}

// CutConsumer blocks s's consumer path: s loses its route to the other
// provider's consumer link, so s can no longer send there (packets from the
// other side still arrive; s's answers cannot go back).
func (top *Topology) CutConsumer(t *testing.T, s *Side) {
	t.Helper()
	s.NS.Run(t, "ip", "route", "del", top.consumerLink(s))
}

// RestoreConsumer undoes CutConsumer.
func (top *Topology) RestoreConsumer(t *testing.T, s *Side) {
	t.Helper()
	s.NS.Run(t, "ip", "route", "add", top.consumerLink(s), "via", gateway(s))
}
