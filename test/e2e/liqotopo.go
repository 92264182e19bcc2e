package e2e

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/liqo-relay/relay/internal/kube/consumer/podmap"
	"github.com/liqo-relay/relay/internal/testbed/netns"
)

// Fixed addresses of the Liqo model, those of docs/liqo-addressing.md §1.
// Both providers and the consumer use pod CIDR 10.244.0.0/16 and external
// CIDR 10.70.0.0/16; the pods a1 in A and b1 in B even have the same
// address.
const (
	lqPodCIDR = "10.244.0.0/16"
	lqExtCIDR = "10.70.0.0/16"
	lqUnknown = "10.70.0.0" // every cluster's unknown-source address, in its own space
	lqTunnelC = "169.254.18.1"
	lqTunnelP = "169.254.18.2"
)

// lqPod is one offloaded pod of a provider.
type lqPod struct {
	ns   *netns.NS
	ip   string // real
	ext  string // ext(p), in C's external CIDR
	node int    // 0 or 1
}

// lqProvider is one provider of the model.
type lqProvider struct {
	name     string
	gw       *netns.NS // the gateway pod; the relay runs here
	nodes    [2]*netns.NS
	pods     [2]lqPod
	gwIP     string // the gateway pod's address (on its eth0, node 0)
	gwExt    string // ext(gateway): the relay's consumer endpoint
	direct   string // the gateway's address on the direct link
	directIf string
	cfg      liqoConfiguration // its Configuration for C
	cSees    liqoConfiguration // C's Configuration for it
	cgw      *netns.NS         // C's gateway for it
	cNodeIP  string            // C's node as that gateway reaches it
}

// cView returns C's view of a provider address (its pod CIDR remapped).
func (p *lqProvider) cView(addr string) string {
	a := netip.MustParseAddr(addr).As4()
	c := netip.MustParsePrefix(p.cSees.remotePod.status).Addr().As4()
	return netip.AddrFrom4([4]byte{c[0], c[1], a[2], a[3]}).String()
}

// view returns the provider's view of an address in C's external CIDR.
func (p *lqProvider) view(ext string) string {
	a := netip.MustParseAddr(ext).As4()
	s := netip.MustParsePrefix(p.cfg.remoteExt.status).Addr().As4()
	return netip.AddrFrom4([4]byte{s[0], s[1], a[2], a[3]}).String()
}

// lqModel is the whole model.
type lqModel struct {
	a, b  *lqProvider
	cNode *netns.NS
	ips   []liqoIP
}

// newLiqoModel builds the namespaces, links, routes, rules and nft tables;
// everything goes away in t.Cleanup.
func newLiqoModel(t *testing.T) *lqModel {
	t.Helper()
	netns.RequireRoot(t)
	m := &lqModel{
		a: &lqProvider{name: "provider-a", gwIP: "10.244.3.8", gwExt: "10.70.0.40", direct: "192.168.12.1",
			cfg:     liqoConfiguration{name: "consumer", remotePod: liqoRemap{lqPodCIDR, "10.91.0.0/16"}, remoteExt: liqoRemap{lqExtCIDR, "10.92.0.0/16"}, localPod: lqPodCIDR, unknownSrc: lqUnknown},
			cSees:   liqoConfiguration{name: "provider-a", remotePod: liqoRemap{lqPodCIDR, "10.71.0.0/16"}, remoteExt: liqoRemap{lqExtCIDR, "10.72.0.0/16"}, localPod: lqPodCIDR, unknownSrc: lqUnknown},
			cNodeIP: "10.80.9.1"},
		b: &lqProvider{name: "provider-b", gwIP: "10.244.3.9", gwExt: "10.70.0.50", direct: "192.168.12.2",
			cfg:     liqoConfiguration{name: "consumer", remotePod: liqoRemap{lqPodCIDR, "10.93.0.0/16"}, remoteExt: liqoRemap{lqExtCIDR, "10.94.0.0/16"}, localPod: lqPodCIDR, unknownSrc: lqUnknown},
			cSees:   liqoConfiguration{name: "provider-b", remotePod: liqoRemap{lqPodCIDR, "10.73.0.0/16"}, remoteExt: liqoRemap{lqExtCIDR, "10.74.0.0/16"}, localPod: lqPodCIDR, unknownSrc: lqUnknown},
			cNodeIP: "10.80.10.1"},
	}
	m.a.pods = [2]lqPod{{ip: "10.244.1.5", ext: "10.70.0.11", node: 0}, {ip: "10.244.2.6", ext: "10.70.0.13", node: 1}}
	m.b.pods = [2]lqPod{{ip: "10.244.1.5", ext: "10.70.0.12", node: 0}, {ip: "10.244.2.7", ext: "10.70.0.14", node: 1}}
	for _, p := range []*lqProvider{m.a, m.b} {
		for i := range p.pods {
			m.ips = append(m.ips, liqoIP{name: fmt.Sprintf("%s-pod%d", p.name, i), spec: p.cView(p.pods[i].ip), status: p.pods[i].ext})
		}
		m.ips = append(m.ips, liqoIP{name: p.name + "-relay", spec: p.cView(p.gwIP), status: p.gwExt})
	}

	m.cNode = netns.New(t, "lq-cn1")
	forwarding(t, m.cNode)
	for _, p := range []*lqProvider{m.a, m.b} {
		short := p.name[len(p.name)-1:] // a or b
		p.gw = netns.New(t, "lq-g"+short)
		p.cgw = netns.New(t, "lq-c"+short)
		forwarding(t, p.gw)
		forwarding(t, p.cgw)
		// Liqo's tunnel between p's gateway and C's gateway for p (a veth for
		// WireGuard): C is the server end.
		cEnd, pEnd := netns.Veth(t, p.cgw, lqTunnelC+"/30", p.gw, lqTunnelP+"/30")
		renameLink(t, p.cgw, cEnd, "liqo-tunnel")
		renameLink(t, p.gw, pEnd, "liqo-tunnel")
		m.buildProvider(t, p)
	}
	m.a.directIf, _ = netns.Veth(t, m.a.gw, m.a.direct+"/24", m.b.gw, m.b.direct+"/24")
	for _, p := range []*lqProvider{m.a, m.b} {
		m.buildConsumerGateway(t, p)
	}
	// C's node: the Configuration CIDRs of each provider to its gateway,
	// and the unknown-source masquerade of transit traffic.
	for _, p := range []*lqProvider{m.a, m.b} {
		for _, cidr := range []string{p.cSees.remotePod.status, p.cSees.remoteExt.status} {
			m.cNode.Run(t, "ip", "route", "add", cidr, "via", gwSide(p.cNodeIP))
		}
		applyNft(t, m.cNode, liqoMasqueradeBypass(p.cSees))
	}
	return m
}

// gwSide is the gateway's end of a /30 whose node end is nodeIP (.1 → .2).
func gwSide(nodeIP string) string {
	return netip.MustParseAddr(nodeIP).Next().String()
}

// buildProvider builds a provider's nodes, pods and gateway pod.
func (m *lqModel) buildProvider(t *testing.T, p *lqProvider) {
	t.Helper()
	short := p.name[len(p.name)-1:]
	var nodeIfs []string
	for i := range p.nodes {
		node := netns.New(t, fmt.Sprintf("lq-%sn%d", short, i+1))
		forwarding(t, node)
		p.nodes[i] = node
		pod := &p.pods[i]
		pod.ns = netns.New(t, fmt.Sprintf("lq-%sp%d", short, i+1))
		gw := netip.MustParsePrefix(pod.ip + "/24").Masked().Addr().Next().String()
		netns.Veth(t, node, gw+"/24", pod.ns, pod.ip+"/24")
		pod.ns.Run(t, "ip", "route", "add", "default", "via", gw)
		// The node's Geneve interface to the gateway: node .1, gateway .2.
		nodeIP := fmt.Sprintf("10.80.%d.1", i+1)
		_, gwIf := netns.Veth(t, node, nodeIP+"/30", p.gw, gwSide(nodeIP)+"/30")
		iface := fmt.Sprintf("liqo.n%d", i+1)
		renameLink(t, p.gw, gwIf, iface)
		nodeIfs = append(nodeIfs, iface)
		// Only the Configuration's CIDRs go to the gateway.
		for _, cidr := range []string{p.cfg.remotePod.status, p.cfg.remoteExt.status} {
			node.Run(t, "ip", "route", "add", cidr, "via", gwSide(nodeIP))
		}
		applyNft(t, node, liqoMasqueradeBypass(p.cfg))
	}
	// The gateway pod's own eth0 on node 0, as the CNI gives it.
	_, eth := netns.Veth(t, p.nodes[0], "10.244.3.1/24", p.gw, p.gwIP+"/24")
	renameLink(t, p.gw, eth, "eth0")
	p.gw.Run(t, "ip", "route", "add", "default", "via", "10.244.3.1")

	// Liqo's tables in the gateway, in the order the controllers create
	// them; every rule without a priority.
	liqoGwExt(p.cfg, nodeIfs, lqTunnelC).apply(t, p.gw)
	for i := range p.nodes {
		nodeIP := fmt.Sprintf("10.80.%d.1", i+1)
		pods := []string{p.pods[i].ip}
		if i == 0 {
			pods = append(pods, p.gwIP)
		}
		liqoGwNode(fmt.Sprintf("%s-node%d", p.name, i+1), nodeIP, nodeIfs[i], pods).apply(t, p.gw)
	}
	liqoExtCIDR(p.name+"-node1", "10.80.1.1", nodeIfs[0], []liqoConfiguration{p.cfg}, nil).apply(t, p.gw)
	applyNft(t, p.gw, liqoRemapCIDR(p.cfg, "eth0"))
}

// buildConsumerGateway builds C's gateway for p: its Geneve link to C's node, its tables and nft.
func (m *lqModel) buildConsumerGateway(t *testing.T, p *lqProvider) {
	t.Helper()
	_, gwIf := netns.Veth(t, m.cNode, p.cNodeIP+"/30", p.cgw, gwSide(p.cNodeIP)+"/30")
	renameLink(t, p.cgw, gwIf, "liqo.n1")

	liqoGwExt(p.cSees, []string{"liqo.n1"}, lqTunnelP).apply(t, p.cgw)
	liqoGwNode("consumer-node1", p.cNodeIP, "liqo.n1", nil).apply(t, p.cgw)
	liqoExtCIDR("consumer-node1", p.cNodeIP, "liqo.n1", []liqoConfiguration{m.a.cSees, m.b.cSees}, m.ips).apply(t, p.cgw)
	liqoNodePortRouting("consumer-node1", p.cNodeIP, "liqo.n1", 1, lqUnknown).apply(t, p.cgw)
	applyNft(t, p.cgw, liqoRemapCIDR(p.cSees, "eth0"))
	applyNft(t, p.cgw, liqoNodePortMarks(lqUnknown, map[string]int{"liqo.n1": 1}))
	for _, ip := range m.ips {
		applyNft(t, p.cgw, liqoIPMapping(ip))
	}
}

// mapping computes both RelayPeers' prefixes and seesUs from the IP objects
// with internal/kube/consumer/podmap, as the operator does.
func (m *lqModel) mapping(t *testing.T) podmap.Result {
	t.Helper()
	prov := func(p *lqProvider) podmap.Provider {
		return podmap.Provider{Name: p.name,
			External: podmap.Remap{Real: netip.MustParsePrefix(p.cfg.remoteExt.spec), Seen: netip.MustParsePrefix(p.cfg.remoteExt.status)},
			Pods:     []podmap.Remap{{Real: netip.MustParsePrefix(p.cSees.remotePod.spec), Seen: netip.MustParsePrefix(p.cSees.remotePod.status)}}}
	}
	var pods []podmap.Pod
	for _, p := range []*lqProvider{m.a, m.b} {
		for i, pod := range p.pods {
			pods = append(pods, podmap.Pod{Name: fmt.Sprintf("default/%s-%d", p.name, i),
				Consumer: netip.MustParseAddr(p.cView(pod.ip)), Ext: netip.MustParseAddr(pod.ext)})
		}
	}
	res, err := podmap.Compute(prov(m.a), prov(m.b), pods)
	if err != nil {
		t.Fatalf("podmap: %v", err)
	}
	if len(res.Skipped) > 0 {
		t.Fatalf("podmap skipped pods: %v", res.Skipped)
	}
	return res
}
