package geneveplan

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"
)

// End is one tunnel end as the kernel should hold it: a vxlan device named
// Name with the single address Local (a host prefix), sending to Remote on
// UDP port Port with VNI.
type End struct {
	Name       string
	VNI        uint32
	Local      netip.Addr
	Remote     netip.Addr
	Port       uint16
	MTU        int // 0 leaves the kernel's default
	DisableARP bool

	// Tunnel is the GeneveTunnel this end belongs to, namespace/name.
	Tunnel string
}

// LocalPrefix is the address the device carries: Local as a host prefix,
// as Liqo adds it (a /32 for IPv4).
func (e End) LocalPrefix() netip.Prefix {
	return netip.PrefixFrom(e.Local, e.Local.BitLen())
}

// Note says why a GeneveTunnel has no end yet. It is information for
// people: the watch brings the tunnel back when the missing piece appears.
type Note struct {
	Tunnel string
	Reason string
}

// Plan is the set of ends one namespace should hold, and the tunnels left
// out with the reason.
type Plan struct {
	Ends  []End
	Notes []Note
}

// Options are the settings both of Liqo's geneve makers take from flags.
type Options struct {
	Port       uint16 // --geneve-port
	DisableARP bool   // --disable-arp
}

// Objects are the API objects a plan is computed from: the tunnels and
// whatever InternalNodes and InternalFabrics are known. Extra objects are
// ignored.
type Objects struct {
	Tunnels []networkingv1beta1.GeneveTunnel
	Nodes   []networkingv1beta1.InternalNode
	Fabrics []networkingv1beta1.InternalFabric
}

type index struct {
	nodes   map[string]*networkingv1beta1.InternalNode
	fabrics map[string]*networkingv1beta1.InternalFabric
}

func newIndex(o Objects) index {
	ix := index{
		nodes:   make(map[string]*networkingv1beta1.InternalNode, len(o.Nodes)),
		fabrics: make(map[string]*networkingv1beta1.InternalFabric, len(o.Fabrics)),
	}
	for i := range o.Nodes {
		ix.nodes[o.Nodes[i].Name] = &o.Nodes[i]
	}
	for i := range o.Fabrics {
		f := &o.Fabrics[i]
		ix.fabrics[f.Namespace+"/"+f.Name] = f
	}
	return ix
}

// GatewayEnds is what the geneve container of the gateway pod in namespace
// (--namespace), running on node podNode (--node-name), makes: for each
// GeneveTunnel of that namespace, the device named by the tunnel's
// InternalNode (spec.interface.gateway.name) with the InternalFabric's
// gateway address, sending to the node's source address for this pod
// (status.nodeIP.local when the pod runs on that node, .remote otherwise).
// A tunnel whose InternalNode is being deleted has no end.
func GatewayEnds(o Objects, namespace, podNode string, opts Options) Plan {
	ix := newIndex(o)
	var b builder
	for _, gt := range sortedTunnels(o.Tunnels) {
		key := gt.Namespace + "/" + gt.Name
		if gt.Namespace != namespace || !gt.DeletionTimestamp.IsZero() {
			continue
		}
		if gt.Spec.InternalNodeRef == nil || gt.Spec.InternalFabricRef == nil {
			b.note(key, "no internalNodeRef or internalFabricRef yet")
			continue
		}
		in, ok := ix.nodes[gt.Spec.InternalNodeRef.Name]
		if !ok {
			b.note(key, fmt.Sprintf("InternalNode %q not found", gt.Spec.InternalNodeRef.Name))
			continue
		}
		if !in.DeletionTimestamp.IsZero() {
			continue
		}
		fkey := gt.Spec.InternalFabricRef.Namespace + "/" + gt.Spec.InternalFabricRef.Name
		fab, ok := ix.fabrics[fkey]
		if !ok {
			b.note(key, fmt.Sprintf("InternalFabric %q not found", fkey))
			continue
		}
		remote := in.Status.NodeIP.Remote
		if in.Name == podNode {
			remote = in.Status.NodeIP.Local
		}
		if remote == nil || *remote == "" {
			b.note(key, fmt.Sprintf("InternalNode %q has no source address for this gateway yet", in.Name))
			continue
		}
		b.add(key, in.Spec.Interface.Gateway.Name, gt.Spec.ID,
			"InternalFabric spec.interface.gateway.ip", string(fab.Spec.Interface.Gateway.IP),
			"InternalNode status.nodeIP", string(*remote), fab.Spec.MTU, opts)
	}
	return b.plan()
}

// NodeEnds is what liqo-fabric on node (--nodename) makes: for each
// GeneveTunnel labelled for that node, the device named by the tunnel's
// InternalFabric (spec.interface.node.name) with the node's address
// (InternalNode spec.interface.node.ip), sending to the gateway pod's IP
// (InternalFabric spec.gatewayIP). A tunnel whose InternalFabric is being
// deleted has no end.
func NodeEnds(o Objects, node string, opts Options) Plan {
	ix := newIndex(o)
	var b builder
	for _, gt := range sortedTunnels(o.Tunnels) {
		key := gt.Namespace + "/" + gt.Name
		if gt.Labels[consts.InternalNodeName] != node || !gt.DeletionTimestamp.IsZero() {
			continue
		}
		if gt.Spec.InternalNodeRef == nil || gt.Spec.InternalFabricRef == nil {
			b.note(key, "no internalNodeRef or internalFabricRef yet")
			continue
		}
		if gt.Spec.InternalNodeRef.Name != node {
			b.note(key, fmt.Sprintf("labelled for node %q but refers to InternalNode %q", node, gt.Spec.InternalNodeRef.Name))
			continue
		}
		fkey := gt.Spec.InternalFabricRef.Namespace + "/" + gt.Spec.InternalFabricRef.Name
		fab, ok := ix.fabrics[fkey]
		if !ok {
			b.note(key, fmt.Sprintf("InternalFabric %q not found", fkey))
			continue
		}
		if !fab.DeletionTimestamp.IsZero() {
			continue
		}
		in, ok := ix.nodes[node]
		if !ok {
			b.note(key, fmt.Sprintf("InternalNode %q not found", node))
			continue
		}
		if fab.Spec.GatewayIP == "" {
			b.note(key, fmt.Sprintf("InternalFabric %q has no gatewayIP yet", fkey))
			continue
		}
		b.add(key, fab.Spec.Interface.Node.Name, gt.Spec.ID,
			"InternalNode spec.interface.node.ip", string(in.Spec.Interface.Node.IP),
			"InternalFabric spec.gatewayIP", string(fab.Spec.GatewayIP), fab.Spec.MTU, opts)
	}
	return b.plan()
}

func sortedTunnels(in []networkingv1beta1.GeneveTunnel) []*networkingv1beta1.GeneveTunnel {
	out := make([]*networkingv1beta1.GeneveTunnel, len(in))
	for i := range in {
		out[i] = &in[i]
	}
	slices.SortFunc(out, func(a, b *networkingv1beta1.GeneveTunnel) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// builder collects ends, refusing a second end under a name or VNI already
// taken: tunnels are visited in name order, so the same one always wins.
type builder struct {
	ends  []End
	notes []Note
	names map[string]string
	vnis  map[uint32]string
}

func (b *builder) note(tunnel, reason string) {
	b.notes = append(b.notes, Note{Tunnel: tunnel, Reason: reason})
}

func (b *builder) add(tunnel, name string, vni uint32, localField, local, remoteField, remote string, mtu int, opts Options) {
	if err := CheckName(name); err != nil {
		b.note(tunnel, err.Error())
		return
	}
	if vni > MaxVNI {
		b.note(tunnel, fmt.Sprintf("id %d does not fit a 24-bit VNI", vni))
		return
	}
	if mtu < 0 {
		b.note(tunnel, fmt.Sprintf("negative MTU %d", mtu))
		return
	}
	l, err := netip.ParseAddr(local)
	if err != nil {
		b.note(tunnel, fmt.Sprintf("%s %q is not an IP address", localField, local))
		return
	}
	r, err := netip.ParseAddr(remote)
	if err != nil {
		// Liqo would resolve a host name here; its remotes are always pod
		// IPs or the node's route source address.
		b.note(tunnel, fmt.Sprintf("%s %q is not an IP address", remoteField, remote))
		return
	}
	if other, ok := b.names[name]; ok {
		b.note(tunnel, fmt.Sprintf("device name %q already used by %s", name, other))
		return
	}
	if other, ok := b.vnis[vni]; ok {
		b.note(tunnel, fmt.Sprintf("id %d already used by %s", vni, other))
		return
	}
	if b.names == nil {
		b.names = map[string]string{}
		b.vnis = map[uint32]string{}
	}
	b.names[name] = tunnel
	b.vnis[vni] = tunnel
	b.ends = append(b.ends, End{
		Name: name, VNI: vni, Local: l.Unmap(), Remote: r.Unmap(),
		Port: opts.Port, MTU: mtu, DisableARP: opts.DisableARP, Tunnel: tunnel,
	})
}

func (b *builder) plan() Plan {
	return Plan{Ends: b.ends, Notes: b.notes}
}
