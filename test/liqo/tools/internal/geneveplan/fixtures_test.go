package geneveplan

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"
)

// The fixtures describe one cluster with two nodes and one gateway pod for
// the remote cluster "provider-a", in tenant namespace "liqo-tenant-a", as
// Liqo's controllers would have left them once the peering is up.

const tenant = "liqo-tenant-a"

func internalNode(name, gwDev, nodeIP, local, remote string) networkingv1beta1.InternalNode {
	in := networkingv1beta1.InternalNode{ObjectMeta: metav1.ObjectMeta{Name: name}}
	in.Spec.Interface.Gateway.Name = gwDev
	in.Spec.Interface.Node.IP = networkingv1beta1.IP(nodeIP)
	if local != "" {
		in.Status.NodeIP.Local = ptr.To(networkingv1beta1.IP(local))
	}
	if remote != "" {
		in.Status.NodeIP.Remote = ptr.To(networkingv1beta1.IP(remote))
	}
	return in
}

func internalFabric(name, nodeDev, gwIP, podIP string, mtu int) networkingv1beta1.InternalFabric {
	f := networkingv1beta1.InternalFabric{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}}
	f.Spec.Interface.Node.Name = nodeDev
	f.Spec.Interface.Gateway.IP = networkingv1beta1.IP(gwIP)
	f.Spec.GatewayIP = networkingv1beta1.IP(podIP)
	f.Spec.MTU = mtu
	return f
}

func geneveTunnel(fabric, node string, id uint32) networkingv1beta1.GeneveTunnel {
	return networkingv1beta1.GeneveTunnel{
		ObjectMeta: metav1.ObjectMeta{
			Name: fabric + "-" + node, Namespace: tenant,
			Labels: map[string]string{consts.InternalFabricName: fabric, consts.InternalNodeName: node},
		},
		Spec: networkingv1beta1.GeneveTunnelSpec{
			ID:                id,
			InternalNodeRef:   &corev1.ObjectReference{Name: node},
			InternalFabricRef: &corev1.ObjectReference{Name: fabric, Namespace: tenant},
		},
	}
}

// peered is the steady state: the gateway pod 10.244.1.7 runs on n1; n1
// reaches it from 10.244.1.1 (its cbr0 address), n2 from 172.18.0.3.
func peered() Objects {
	return Objects{
		Tunnels: []networkingv1beta1.GeneveTunnel{
			geneveTunnel("provider-a", "n1", 0),
			geneveTunnel("provider-a", "n2", 1),
		},
		Nodes: []networkingv1beta1.InternalNode{
			internalNode("n1", "liqo.aaaaaaaaaa", "10.80.0.1", "10.244.1.1", ""),
			internalNode("n2", "liqo.bbbbbbbbbb", "10.80.0.2", "", "172.18.0.3"),
		},
		Fabrics: []networkingv1beta1.InternalFabric{
			internalFabric("provider-a", "liqo.ffffffffff", "10.80.0.3", "10.244.1.7", 1340),
		},
	}
}
