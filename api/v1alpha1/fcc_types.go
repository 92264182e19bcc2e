package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConnectionPaths says which paths the two relays get.
type ConnectionPaths struct {
	// Direct gives the relays a direct path to each other, at the
	// endpoints their Relays publish.
	// +optional
	// +kubebuilder:default=true
	Direct *bool `json:"direct,omitempty"`
	// Consumer gives the relays a path through the consumer, over Liqo's
	// existing tunnels.
	// +optional
	// +kubebuilder:default=true
	Consumer *bool `json:"consumer,omitempty"`
	// ConsumerBias is added to the consumer path's cost (RelayPeer
	// paths[].bias), so that the relays prefer the direct path unless it
	// is slower by more than this. At equal latency direct is the better
	// path: the consumer path carries every byte through the consumer's
	// gateway twice. Without a bias a relay that failed over to the
	// consumer path would stay there after the direct path is repaired
	// whenever the two measure alike. "0s" disables it.
	// +optional
	// +kubebuilder:default="5ms"
	ConsumerBias Duration `json:"consumerBias,omitempty"`
}

// KubeconfigSecretRef names a Secret in the operator's namespace holding a
// kubeconfig for a provider's API server, used when the credentials Liqo
// keeps are not enough.
type KubeconfigSecretRef struct {
	// Name of the Secret, in the operator's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key of the kubeconfig in the Secret's data; default "kubeconfig".
	// +optional
	Key string `json:"key,omitempty"`
}

// ForeignClusterConnectionSpec names two providers to connect directly.
type ForeignClusterConnectionSpec struct {
	// ClusterA is the Liqo cluster ID of the first provider. Immutable:
	// what the operator wrote is named after it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterA is immutable: create another ForeignClusterConnection"
	ClusterA string `json:"clusterA"`
	// ClusterB is the Liqo cluster ID of the second provider. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterB is immutable: create another ForeignClusterConnection"
	ClusterB string `json:"clusterB"`
	// Paths the relays get.
	// +optional
	Paths ConnectionPaths `json:"paths,omitempty"`
	// Health overrides passed to both RelayPeers.
	// +optional
	Health *Health `json:"health,omitempty"`
	// KubeconfigA overrides the credentials Liqo keeps for reaching
	// clusterA's API server.
	// +optional
	KubeconfigA *KubeconfigSecretRef `json:"kubeconfigA,omitempty"`
	// KubeconfigB overrides the credentials Liqo keeps for reaching
	// clusterB's API server.
	// +optional
	KubeconfigB *KubeconfigSecretRef `json:"kubeconfigB,omitempty"`
}

// ConnectionPhase summarises a ForeignClusterConnection.
// +kubebuilder:validation:Enum=Pending;Provisioning;Connected;Degraded;Failed
type ConnectionPhase string

// Phases.
const (
	PhasePending      ConnectionPhase = "Pending"
	PhaseProvisioning ConnectionPhase = "Provisioning"
	PhaseConnected    ConnectionPhase = "Connected"
	PhaseDegraded     ConnectionPhase = "Degraded"
	PhaseFailed       ConnectionPhase = "Failed"
)

// DirectionStatus is one direction of the connection, copied from the
// RelayPeer status in the sending provider.
type DirectionStatus struct {
	// ActivePath is the path carrying this direction's traffic, empty
	// when none.
	// +optional
	ActivePath string `json:"activePath,omitempty"`
	// Reachable is true while at least one path is up.
	// +optional
	Reachable bool `json:"reachable"`
	// RTT of the active path, as a duration string.
	// +optional
	RTT string `json:"rtt,omitempty"`
	// Endpoints is the number of pod addresses (/32s) carried.
	// +optional
	Endpoints int32 `json:"endpoints"`
}

// ForeignClusterConnectionStatus is what the operator reports.
type ForeignClusterConnectionStatus struct {
	// ObservedGeneration is the spec generation the operator last
	// processed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase summarises the connection: Pending, Provisioning, Connected,
	// Degraded or Failed; the conditions say why.
	// +optional
	Phase ConnectionPhase `json:"phase,omitempty"`
	// AToB is the direction from clusterA to clusterB (A's RelayPeer for B).
	// +optional
	AToB DirectionStatus `json:"aToB,omitempty"`
	// BToA is the direction from clusterB to clusterA (B's RelayPeer for A).
	// +optional
	BToA DirectionStatus `json:"bToA,omitempty"`
	// OverlayA is the overlay addresses clusterA's relay publishes in its
	// Relay's status.addresses (comma-separated), which the operator
	// copies into B's RelayPeer; see docs/operator.md, "Overlay
	// addresses".
	// +optional
	OverlayA string `json:"overlayA,omitempty"`
	// OverlayB is the same for clusterB's relay, copied into A's
	// RelayPeer.
	// +optional
	OverlayB string `json:"overlayB,omitempty"`
	// LastTransition is when the phase last changed.
	// +optional
	LastTransition *metav1.Time `json:"lastTransition,omitempty"`
	// Conditions say what the operator found, each with a reason a person
	// can act on (docs/operator.md).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ForeignClusterConnection connects two provider clusters of a Liqo
// consumer directly, through their relays. It lives in the consumer.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fcc,categories=liqo-relay
// +kubebuilder:printcolumn:name="A",type=string,JSONPath=`.spec.clusterA`
// +kubebuilder:printcolumn:name="B",type=string,JSONPath=`.spec.clusterB`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="A->B",type=string,JSONPath=`.status.aToB.activePath`
// +kubebuilder:printcolumn:name="B->A",type=string,JSONPath=`.status.bToA.activePath`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ForeignClusterConnection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the two providers and how to connect them.
	Spec ForeignClusterConnectionSpec `json:"spec"`
	// Status is what the operator reports about the connection.
	// +optional
	Status ForeignClusterConnectionStatus `json:"status,omitempty"`
}

// ForeignClusterConnectionList is a list of ForeignClusterConnections.
//
// +kubebuilder:object:root=true
type ForeignClusterConnectionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ForeignClusterConnection `json:"items"`
}
