package dnsfeed

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Labels Liqo v1.2.0 puts on a tenant namespace
// (pkg/tenantNamespace/namespaceManager.go, ForgeNamespace).
const (
	// TenantNamespaceLabel marks a tenant namespace (consts.TenantNamespaceLabel).
	TenantNamespaceLabel = "liqo.io/tenant-namespace"
	// RemoteClusterIDLabel is the cluster ID of the peer the tenant
	// namespace belongs to (consts.RemoteClusterID); in a provider, the
	// consumer's.
	RemoteClusterIDLabel = "liqo.io/remote-cluster-id"
)

// ConsumerFromNamespace reads the consumer's Liqo cluster ID from the
// labels of the tenant namespace ns, as Liqo does
// (pkg/tenantNamespace/utils.go, GetClusterIDFromTenantNamespace): the
// namespace must carry TenantNamespaceLabel, and its
// RemoteClusterIDLabel is the ID. It needs get on that namespace
// (manifests/rbac/relay-dns-role.yaml).
func ConsumerFromNamespace(ctx context.Context, cs kubernetes.Interface, ns string) (string, error) {
	n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
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
