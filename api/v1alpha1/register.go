package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of every liqo-relay kind.
const Group = "relay.liqo-relay.io"

// SchemeGroupVersion is the group and version of this package's kinds.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

var (
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme registers this package's kinds with a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&Relay{}, &RelayList{},
		&RelayPeer{}, &RelayPeerList{},
		&ForeignClusterConnection{}, &ForeignClusterConnectionList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
