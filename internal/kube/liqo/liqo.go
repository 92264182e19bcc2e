// Package liqo names the parts of Liqo v1.2 that both sides read: its
// resources and labels, and the cluster IDs a process needs to know where
// it runs (this cluster's own, from Liqo's ConfigMap, and the peer's of a
// tenant namespace). The consumer's readers of a peering are in
// consumer/peering.
package liqo

import "k8s.io/apimachinery/pkg/runtime/schema"

// Resources of Liqo v1.2.0.
var (
	ForeignClusters = schema.GroupVersionResource{Group: "core.liqo.io", Version: "v1beta1", Resource: "foreignclusters"}
	Identities      = schema.GroupVersionResource{Group: "authentication.liqo.io", Version: "v1beta1", Resource: "identities"}
	Configurations  = schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "configurations"}
	IPs             = schema.GroupVersionResource{Group: "ipam.liqo.io", Version: "v1alpha1", Resource: "ips"}
)

// Labels Liqo sets.
const (
	RemoteClusterIDLabel = "liqo.io/remote-cluster-id"
	OffloadedPodLabel    = "offloading.liqo.io/pod-name"
	OffloadedPodNSLabel  = "offloading.liqo.io/pod-namespace"
	// KubeconfigKey is the data key of a control-plane kubeconfig Secret.
	KubeconfigKey = "kubeconfig"
)
