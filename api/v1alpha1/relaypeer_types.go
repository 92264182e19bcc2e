package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duration is a Go duration string such as "100ms" or "2s".
// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
type Duration string

// Prefix is an IP prefix in CIDR notation, IPv4 or IPv6.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:Pattern=`^([0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}|[0-9a-fA-F:.]+/[0-9]{1,3})$`
type Prefix string

// RelayPeerSpec is exactly a peer of the relay's file format
// (docs/config.md), without its name: the object's name is the peer's name.
type RelayPeerSpec struct {
	// PublicKey is the peer relay's WireGuard public key (base64).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`
	PublicKey string `json:"publicKey"`
	// NextPublicKey is the key the peer relay rotates to, while it
	// rotates (its Relay's status.nextPublicKey): the relay accepts the
	// peer under it as soon as the peer switches, with no disruption
	// (docs/protocol.md, "Key rotation").
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`
	NextPublicKey string `json:"nextPublicKey,omitempty"`
	// Prefixes are the destinations routed to this peer, in our address
	// space. They must lie inside the relay's allowedPeerPrefixes.
	// +optional
	// +kubebuilder:validation:MaxItems=8192
	// +listType=atomic
	Prefixes []Prefix `json:"prefixes,omitempty"`
	// SeesUs says how this peer sees our prefixes.
	// +optional
	// +kubebuilder:validation:MaxItems=8192
	// +listType=atomic
	SeesUs []Mapping `json:"seesUs,omitempty"`
	// Paths are the ways to reach the peer, in order of preference.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Paths []Path `json:"paths,omitempty"`
	// PersistentKeepalive as a duration; "0s" disables it.
	// +optional
	PersistentKeepalive Duration `json:"persistentKeepalive,omitempty"`
	// Health overrides the relay's health settings for this peer.
	// +optional
	Health *Health `json:"health,omitempty"`
}

// Mapping translates one of our prefixes: the peer sees Real as As.
type Mapping struct {
	Real Prefix `json:"real"`
	As   Prefix `json:"as"`
}

// Path is one way to reach the peer.
type Path struct {
	// Name of the path, a DNS label such as direct or consumer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Endpoint is host:port; the host is an IP address or a DNS name.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=261
	Endpoint string `json:"endpoint"`
	// Bias is added to the path's cost in selection.
	// +optional
	Bias Duration `json:"bias,omitempty"`
}

// Health holds per-peer overrides of the relay's health settings. Every
// field is optional; docs/config.md documents each one and its default.
type Health struct {
	// +optional
	Interval Duration `json:"interval,omitempty"`
	// +optional
	IdleInterval Duration `json:"idleInterval,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=255
	DetectMultiplier *int32 `json:"detectMultiplier,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	UpThreshold *int32 `json:"upThreshold,omitempty"`
	// +optional
	BetterMargin Duration `json:"betterMargin,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	BetterMarginRatio *float64 `json:"betterMarginRatio,omitempty"`
	// +optional
	BetterHold Duration `json:"betterHold,omitempty"`
	// +optional
	FailbackHold Duration `json:"failbackHold,omitempty"`
	// +optional
	LossPenalty Duration `json:"lossPenalty,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=lowest-cost;naive
	Selector string `json:"selector,omitempty"`
	// +optional
	Dampening *Dampening `json:"dampening,omitempty"`
}

// Dampening overrides the flap dampening settings.
type Dampening struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +optional
	Penalty *float64 `json:"penalty,omitempty"`
	// +optional
	HalfLife Duration `json:"halfLife,omitempty"`
	// +optional
	Suppress *float64 `json:"suppress,omitempty"`
	// +optional
	Reuse *float64 `json:"reuse,omitempty"`
}

// PathState is a path's health.
// +kubebuilder:validation:Enum=up;down;dampened;unknown
type PathState string

// Path states.
const (
	PathUp       PathState = "up"
	PathDown     PathState = "down"
	PathDampened PathState = "dampened"
	PathUnknown  PathState = "unknown"
)

// PathStatus is what the relay measures on one path.
type PathStatus struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint,omitempty"`
	// Address is the endpoint as resolved (ip:port).
	// +optional
	Address string    `json:"address,omitempty"`
	State   PathState `json:"state"`
	// RTT and Jitter are smoothed estimates, as duration strings.
	// +optional
	RTT string `json:"rtt,omitempty"`
	// +optional
	Jitter string `json:"jitter,omitempty"`
	// Loss is the recent probe loss, as a percentage string such as "1.5%".
	// +optional
	Loss string `json:"loss,omitempty"`
}

// RelayPeerStatus is what the relay reports about one peer.
type RelayPeerStatus struct {
	// ObservedGeneration is the spec generation the relay last processed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ActivePath is the path carrying the peer's traffic, empty when none.
	// +optional
	ActivePath string `json:"activePath,omitempty"`
	// Reachable is true while at least one path is up.
	// +optional
	Reachable bool `json:"reachable"`
	// RTT of the active path, as a duration string.
	// +optional
	RTT string `json:"rtt,omitempty"`
	// LastHandshake is the time of the last WireGuard handshake.
	// +optional
	LastHandshake *metav1.Time `json:"lastHandshake,omitempty"`
	// LastTransition is when the active path or reachability last changed.
	// +optional
	LastTransition *metav1.Time `json:"lastTransition,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Paths []PathStatus `json:"paths,omitempty"`
	// Conditions: Ready, Reachable, Degraded.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RelayPeer is one remote peer of a relay. It lives in the relay's namespace
// and carries the label relay.liqo-relay.io/relay=<relay name>.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=rpeer,categories=liqo-relay
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activePath`
// +kubebuilder:printcolumn:name="Reachable",type=boolean,JSONPath=`.status.reachable`
// +kubebuilder:printcolumn:name="RTT",type=string,JSONPath=`.status.rtt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RelayPeer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RelayPeerSpec `json:"spec"`
	// +optional
	Status RelayPeerStatus `json:"status,omitempty"`
}

// RelayPeerList is a list of RelayPeers.
//
// +kubebuilder:object:root=true
type RelayPeerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RelayPeer `json:"items"`
}
