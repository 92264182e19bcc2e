package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Liqo's labels and names (Liqo v1.2.0; docs/operator.md).
const (
	ComponentLabel   = "networking.liqo.io/component"
	ComponentGateway = "gateway"
	GatewayNameLabel = "networking.liqo.io/gateway-name"
	ActiveLabel      = "networking.liqo.io/active"
	// clusterIDConfigMapLabel selects Liqo's cluster-ID ConfigMap in Liqo's
	// namespace (pkg/consts/clusterid.go, ClusterIDConfigMapSelector), whose
	// data key CLUSTER_ID holds the ID (ClusterIDConfigMapKey).
	clusterIDConfigMapLabel = "app.kubernetes.io/name=clusterid-configmap"
	clusterIDKey            = "CLUSTER_ID"
	// remoteClusterIDArg is the argument of Liqo's gateway containers that
	// names the remote (consumer) cluster.
	remoteClusterIDArg = "--remote-cluster-id="
)

// ReadLocalClusterID reads this cluster's Liqo cluster ID the way Liqo does
// (pkg/utils/cluster_info.go, GetClusterIDWithNativeClient): the one
// ConfigMap labelled app.kubernetes.io/name=clusterid-configmap in Liqo's
// namespace, data key CLUSTER_ID.
func ReadLocalClusterID(ctx context.Context, cs kubernetes.Interface, liqoNS string) (string, error) {
	list, err := cs.CoreV1().ConfigMaps(liqoNS).List(ctx, metav1.ListOptions{LabelSelector: clusterIDConfigMapLabel})
	if err != nil {
		return "", fmt.Errorf("listing Liqo's cluster-ID ConfigMap in %s: %w", liqoNS, err)
	}
	switch len(list.Items) {
	case 0:
		return "", fmt.Errorf("no ConfigMap labelled %s in namespace %s: is Liqo installed there? (or set localClusterID in the sidecar file)", clusterIDConfigMapLabel, liqoNS)
	case 1:
	default:
		return "", fmt.Errorf("%d ConfigMaps labelled %s in namespace %s", len(list.Items), clusterIDConfigMapLabel, liqoNS)
	}
	cm := list.Items[0]
	id := strings.TrimSpace(cm.Data[clusterIDKey])
	if id == "" {
		return "", fmt.Errorf("ConfigMap %s/%s has no %s", liqoNS, cm.Name, clusterIDKey)
	}
	return id, nil
}

// ConsumerID is the remote (consumer) cluster of a gateway pod: the
// --remote-cluster-id argument of Liqo's containers, else the gateway's
// name (by default the remote cluster ID).
func ConsumerID(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		for _, a := range c.Args {
			if v, ok := strings.CutPrefix(a, remoteClusterIDArg); ok && v != "" && !strings.Contains(v, "{{") {
				return v
			}
		}
	}
	return pod.Labels[GatewayNameLabel]
}

// RelayName is the relay's name: the local cluster ID, or
// <local>-<consumer> with perConsumer. A name longer than a DNS label
// (63) is cut and ends in a hash of the whole, so it stays unique.
func RelayName(local, consumer string, perConsumer bool) string {
	name := local
	if perConsumer && consumer != "" {
		name = local + "-" + consumer
	}
	return shorten(strings.ToLower(name), 63)
}

// shorten cuts s to max characters, replacing its end with 8 hex digits of
// its SHA-256 when it is longer.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return strings.TrimRight(s[:max-9], "-") + "-" + hex.EncodeToString(sum[:4])
}

// objectName is the name of a per-gateway object: liqo-relay-<gateway>,
// shortened to a DNS label (Service names must start with a letter, and
// gateway names, cluster IDs, may start with a digit).
func objectName(gateway string) string { return shorten("liqo-relay-"+gateway, 63) }
