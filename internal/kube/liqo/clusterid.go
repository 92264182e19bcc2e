package liqo

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The ConfigMap in Liqo's namespace that holds the cluster's own ID
// (deployments/liqo/templates/liqo-clusterid-configmap.yaml; found by
// label as consts.ClusterIDConfigMapSelector does, key
// consts.ClusterIDConfigMapKey).
const (
	ClusterIDConfigMapLabel = "app.kubernetes.io/name=clusterid-configmap"
	ClusterIDKey            = "CLUSTER_ID"
)

// LocalClusterID reads this cluster's Liqo cluster ID from the ConfigMap
// Liqo's chart installs in namespace ns (Liqo's namespace, "liqo" by
// default).
func LocalClusterID(ctx context.Context, core kubernetes.Interface, ns string) (string, error) {
	list, err := core.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: ClusterIDConfigMapLabel})
	if err != nil {
		return "", fmt.Errorf("listing ConfigMaps %s in %s: %w", ClusterIDConfigMapLabel, ns, err)
	}
	if len(list.Items) != 1 {
		return "", fmt.Errorf("%d ConfigMaps labelled %s in namespace %s, want 1: pass --cluster-id, or --liqo-namespace if Liqo is installed elsewhere", len(list.Items), ClusterIDConfigMapLabel, ns)
	}
	id := list.Items[0].Data[ClusterIDKey]
	if id == "" {
		return "", fmt.Errorf("ConfigMap %s/%s has no data.%s", ns, list.Items[0].Name, ClusterIDKey)
	}
	return id, nil
}
