package liqo

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestTenantClusterID(t *testing.T) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	cs := fake.NewClientset(
		ns("liqo-tenant-c1", map[string]string{TenantNamespaceLabel: "true", RemoteClusterIDLabel: "c1"}),
		ns("plain", map[string]string{RemoteClusterIDLabel: "c1"}),
		ns("no-id", map[string]string{TenantNamespaceLabel: "true"}),
	)
	for _, tc := range []struct {
		ns, want, err string
	}{
		{ns: "liqo-tenant-c1", want: "c1"},
		{ns: "plain", err: "not a Liqo tenant namespace (no label liqo.io/tenant-namespace)"},
		{ns: "no-id", err: "has no label liqo.io/remote-cluster-id"},
		{ns: "missing", err: "reading namespace missing"},
	} {
		got, err := TenantClusterID(context.Background(), cs, tc.ns)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want %q", tc.ns, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.ns, got, err, tc.want)
		}
	}
}
