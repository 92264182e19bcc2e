package podrunner

import corev1 "k8s.io/api/core/v1"

// Objects is the runner's read access to the API objects a pod refers to.
// The runner implements it with informer listers; tests with fixed maps.
// A missing object is reported with an error for which
// k8s.io/apimachinery/pkg/api/errors.IsNotFound is true. Returned objects
// are shared: callers must not modify them.
type Objects interface {
	ConfigMap(namespace, name string) (*corev1.ConfigMap, error)
	Secret(namespace, name string) (*corev1.Secret, error)
	// Services lists the Services of a namespace.
	Services(namespace string) ([]*corev1.Service, error)
}
