package liqo

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TenantNamespaceLabel marks a Liqo tenant namespace
// (consts.TenantNamespaceLabel); Liqo v1.2.0 labels it "true" and
// RemoteClusterIDLabel the peer's cluster ID
// (pkg/tenantNamespace/namespaceManager.go, ForgeNamespace).
const TenantNamespaceLabel = "liqo.io/tenant-namespace"

// TenantClusterID reads the cluster ID of the peer that tenant namespace
// ns belongs to (in a provider, the consumer's) from its labels, as Liqo
// does (pkg/tenantNamespace/utils.go, GetClusterIDFromTenantNamespace):
// ns must carry TenantNamespaceLabel, and its RemoteClusterIDLabel is the
// ID. It needs get on that Namespace.
func TenantClusterID(ctx context.Context, core kubernetes.Interface, ns string) (string, error) {
	n, err := core.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading namespace %s for the consumer's cluster ID (label %s): %w", ns, RemoteClusterIDLabel, err)
	}
	if _, ok := n.Labels[TenantNamespaceLabel]; !ok {
		return "", fmt.Errorf("namespace %s is not a Liqo tenant namespace (no label %s): give the consumer's cluster ID with --consumer-cluster-id", ns, TenantNamespaceLabel)
	}
	id := strings.TrimSpace(n.Labels[RemoteClusterIDLabel])
	if id == "" {
		return "", fmt.Errorf("tenant namespace %s has no label %s: give the consumer's cluster ID with --consumer-cluster-id", ns, RemoteClusterIDLabel)
	}
	return id, nil
}
