package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RelaySpec is what an operator or the chart sets on a relay. Settings that
// need a restart (addresses, exports, mode, listen port) stay in the relay's
// own configuration file, so that they have a single source.
type RelaySpec struct {
	// Endpoints are the host:port pairs other providers use to reach this
	// relay on the direct path, in order of preference. Set either
	// endpoints or serviceRef.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Endpoints []string `json:"endpoints,omitempty"`
	// ServiceRef names a Service in the relay's namespace whose
	// LoadBalancer ingress gives the endpoints.
	// +optional
	ServiceRef *ServiceRef `json:"serviceRef,omitempty"`
}

// ServiceRef names a Service in the same namespace.
type ServiceRef struct {
	// Name of the Service.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Port is the Service port that carries the relay's UDP traffic; 0
	// means the Service's first UDP port.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// RelayStatus is what the relay reports about itself.
type RelayStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// PublicKey is the relay's WireGuard public key (base64). The private
	// key never leaves the relay's Secret.
	// +optional
	PublicKey string `json:"publicKey,omitempty"`
	// NextPublicKey is set while a key rotation is staged: the key the
	// relay switches to once every peer accepts it. Operators copy it into
	// the nextPublicKey of the RelayPeers that name this relay.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`
	NextPublicKey string `json:"nextPublicKey,omitempty"`
	// PreviousPublicKey is reserved; this version does not set it.
	// +optional
	PreviousPublicKey string `json:"previousPublicKey,omitempty"`
	// KeyRotation is the value of the rotate-key annotation
	// (relay.liqo-relay.io/rotate-key) the relay last acted on.
	// +optional
	KeyRotation string `json:"keyRotation,omitempty"`
	// Endpoints as resolved: from spec.endpoints, or from the LoadBalancer
	// ingress of spec.serviceRef.
	// +optional
	// +listType=atomic
	Endpoints []string `json:"endpoints,omitempty"`
	// Addresses are the relay's own overlay addresses (its configuration's
	// addresses, as prefixes). The consumer's operator lists them in the
	// other provider's RelayPeer for this relay.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Addresses []string `json:"addresses,omitempty"`
	// ListenPort is the relay's UDP port.
	// +optional
	ListenPort int32 `json:"listenPort,omitempty"`
	// Mode is tun or netstack.
	// +optional
	Mode string `json:"mode,omitempty"`
	// Version is the relay's build version.
	// +optional
	Version string `json:"version,omitempty"`
	// ProtocolVersion is the probe protocol version the relay speaks.
	// +optional
	ProtocolVersion int32 `json:"protocolVersion,omitempty"`
	// Ready is true while the relay runs and serves.
	// +optional
	Ready bool `json:"ready"`
	// Conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Relay is one relay process. The relay creates it, named after the relay's
// configured name, and keeps its status up to date.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rly,categories=liqo-relay
// +kubebuilder:printcolumn:name="PublicKey",type=string,JSONPath=`.status.publicKey`
// +kubebuilder:printcolumn:name="Endpoints",type=string,JSONPath=`.status.endpoints`
// +kubebuilder:printcolumn:name="Ready",type=boolean,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Relay struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the operator or the chart sets on the relay.
	// +optional
	Spec RelaySpec `json:"spec,omitempty"`
	// Status is what the relay publishes about itself.
	// +optional
	Status RelayStatus `json:"status,omitempty"`
}

// RelayList is a list of Relays.
//
// +kubebuilder:object:root=true
type RelayList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Relay `json:"items"`
}
