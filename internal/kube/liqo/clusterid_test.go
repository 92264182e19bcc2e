package liqo

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLocalClusterID(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "liqo", Name: "liqo-clusterid-configmap",
			Labels: map[string]string{"app.kubernetes.io/name": "clusterid-configmap"}},
		Data: map[string]string{ClusterIDKey: "cons-c"},
	}
	id, err := LocalClusterID(context.Background(), fake.NewClientset(cm), "liqo")
	if err != nil || id != "cons-c" {
		t.Errorf("LocalClusterID = %q, %v", id, err)
	}
	_, err = LocalClusterID(context.Background(), fake.NewClientset(cm), "elsewhere")
	if err == nil || !strings.Contains(err.Error(), "--cluster-id") {
		t.Errorf("no ConfigMap: %v", err)
	}
}
