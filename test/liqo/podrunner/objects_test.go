package podrunner

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// mapObjects is an Objects over fixed maps, keyed by namespace/name.
type mapObjects struct {
	cms      map[string]*corev1.ConfigMap
	secrets  map[string]*corev1.Secret
	services map[string][]*corev1.Service // by namespace
}

var _ Objects = mapObjects{}

func (m mapObjects) ConfigMap(ns, name string) (*corev1.ConfigMap, error) {
	if c, ok := m.cms[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (m mapObjects) Secret(ns, name string) (*corev1.Secret, error) {
	if s, ok := m.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (m mapObjects) Services(ns string) ([]*corev1.Service, error) { return m.services[ns], nil }
