package dnsfeed

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/liqo-relay/relay/internal/kube/liqo"
	"github.com/liqo-relay/relay/test/k8s/k8stest"
)

// The feed on a real API server, as the relay's ServiceAccount with only
// manifests/rbac/relay-dns-role.yaml (and the relay Role): it lists and
// watches EndpointSlices in namespaces other than its own.
func TestRunOnAPIServer(t *testing.T) {
	c, cs := dnsCluster(t)
	c.KubectlIn(t, sliceYAML("web-refl", "web", "consumer-c", "10.92.0.12"), "apply", "-f", "-")
	c.KubectlIn(t, sliceYAML("db-refl", "db", "consumer-d", "10.92.0.30"), "apply", "-f", "-")

	// The consumer's cluster ID, from the tenant namespace's label, read
	// with the ClusterRole's rights.
	if id, err := liqo.TenantClusterID(context.Background(), cs, "tenant-c"); err != nil || id != "consumer-c" {
		t.Fatalf("TenantClusterID(tenant-c) = %q, %v; want consumer-c", id, err)
	}
	if _, err := liqo.TenantClusterID(context.Background(), cs, "shop"); err == nil || !strings.Contains(err.Error(), "not a Liqo tenant namespace") {
		t.Errorf("TenantClusterID(shop): %v, want not a Liqo tenant namespace", err)
	}

	s := newSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Client: cs, Consumer: "consumer-c", Sink: s, Debounce: 10 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	expect := func(want map[string][]netip.Addr) {
		t.Helper()
		k8stest.Eventually(t, "Services fed", func() string {
			if got, _ := s.last(); got == nil || !reflect.DeepEqual(got, want) {
				return fmt.Sprintf("sink has %v, want %v", got, want)
			}
			return ""
		})
	}
	expect(map[string][]netip.Addr{"web.shop": addrs("10.92.0.12")})
	c.KubectlIn(t, sliceYAML("web-abc", "web", "", "10.244.1.5"), "apply", "-f", "-")
	expect(map[string][]netip.Addr{"web.shop": addrs("10.244.1.5", "10.92.0.12")})
	c.Kubectl(t, "-n", "shop", "delete", "endpointslice", "web-refl")
	expect(map[string][]netip.Addr{})
}

// dnsCluster starts an API server with the relay's tenant namespace
// tenant-c, labelled as Liqo does, and namespace shop, and returns a
// client with the rights of the relay's ServiceAccount under the DNS
// ClusterRole, after checking that RBAC gives it no more.
func dnsCluster(t *testing.T) (*k8stest.Cluster, kubernetes.Interface) {
	c := k8stest.Start(t, "dnsfeed", "")
	c.Kubectl(t, "create", "namespace", "tenant-c")
	c.Kubectl(t, "create", "namespace", "shop")
	c.Kubectl(t, "apply", "-f", filepath.Join(k8stest.Root(), "manifests", "rbac", "relay-dns-role.yaml"))
	kc := c.ServiceAccountKubeconfig(t, "tenant-c", "relay")
	c.Kubectl(t, "create", "clusterrolebinding", "liqo-relay-dns-tenant-c", "--clusterrole=liqo-relay-dns", "--serviceaccount=tenant-c:relay")
	// Liqo's tenant namespace labels (ForgeNamespace, v1.2.0).
	c.Kubectl(t, "label", "namespace", "tenant-c", liqo.TenantNamespaceLabel+"=true", liqo.RemoteClusterIDLabel+"=consumer-c")
	for _, args := range [][]string{
		{"auth", "can-i", "--as=system:serviceaccount:tenant-c:relay", "-n", "shop", "get", "endpointslices.discovery.k8s.io"},
		{"auth", "can-i", "--as=system:serviceaccount:tenant-c:relay", "-n", "shop", "list", "services"},
		{"auth", "can-i", "--as=system:serviceaccount:tenant-c:relay", "list", "namespaces"},
		{"auth", "can-i", "--as=system:serviceaccount:tenant-c:relay", "update", "namespaces"},
	} {
		// The answer is the last line (a warning may precede it).
		if out, _ := c.KubectlErr(args...); !strings.HasSuffix(strings.TrimSpace(out), "\nno") && strings.TrimSpace(out) != "no" {
			t.Errorf("kubectl %s: %q, want no", strings.Join(args, " "), out)
		}
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c, cs
}

// sliceYAML is an EndpointSlice in shop for Service svc with one ready
// address: native, or reflected by Liqo from origin.
func sliceYAML(name, svc, origin, addr string) string {
	managed := "endpointslice-controller.k8s.io"
	extra := ""
	if origin != "" {
		managed = reflectionManager
		extra = fmt.Sprintf("\n    %s: %s", originLabel, origin)
	}
	return fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s
  namespace: shop
  labels:
    kubernetes.io/service-name: %s
    endpointslice.kubernetes.io/managed-by: %s%s
addressType: IPv4
endpoints:
  - addresses: [%s]
    conditions: {ready: true}
`, name, svc, managed, extra, addr)
}
