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
	// Real is our prefix, as our pods have it.
	Real Prefix `json:"real"`
	// As is the prefix the peer reaches it at, of the same length.
	As Prefix `json:"as"`
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
	// Interval is the probe interval of the active path (default 100ms,
	// at least 10ms).
	// +optional
	Interval Duration `json:"interval,omitempty"`
	// IdleInterval is the probe interval of the other paths (default
	// 500ms, at least interval).
	// +optional
	IdleInterval Duration `json:"idleInterval,omitempty"`
	// DetectMultiplier: a path is down after detectMultiplier × interval
	// without an answer (default 3).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=255
	DetectMultiplier *int32 `json:"detectMultiplier,omitempty"`
	// UpThreshold: a down path is up again after this many consecutive
	// answers (default 3).
	// +optional
	// +kubebuilder:validation:Minimum=1
	UpThreshold *int32 `json:"upThreshold,omitempty"`
	// BetterMargin: a challenger path must be cheaper than the active one
	// by more than this (default 2ms)...
	// +optional
	BetterMargin Duration `json:"betterMargin,omitempty"`
	// BetterMarginRatio: ...and by more than this fraction of the active
	// path's cost, 0 to 1 (default 0.10)...
	// +optional
	// +kubebuilder:validation:Minimum=0
	BetterMarginRatio *float64 `json:"betterMarginRatio,omitempty"`
	// BetterHold: ...continuously for this long before traffic moves to it
	// (default 2s).
	// +optional
	BetterHold Duration `json:"betterHold,omitempty"`
	// FailbackHold: a recovered path must stay up this long before traffic
	// fails back to it (default 3s).
	// +optional
	FailbackHold Duration `json:"failbackHold,omitempty"`
	// LossPenalty is the cost added per 100% probe loss (default 200ms: 1%
	// loss costs 2ms).
	// +optional
	LossPenalty Duration `json:"lossPenalty,omitempty"`
	// Selector is lowest-cost (the default) or naive: always the path with
	// the lowest last RTT, with no margins, holds or dampening; it flaps
	// by design and exists only as a baseline for experiments.
	// +optional
	// +kubebuilder:validation:Enum=lowest-cost;naive
	Selector string `json:"selector,omitempty"`
	// Dampening overrides the flap dampening of paths.
	// +optional
	Dampening *Dampening `json:"dampening,omitempty"`
}

// Dampening overrides the flap dampening settings: each time a path goes
// down it gains penalty, which halves every halfLife; above suppress the
// path is not chosen until its penalty has decayed below reuse.
type Dampening struct {
	// Enabled: false turns dampening off (default true).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Penalty is added to a path's penalty each time it goes down (default
	// 1000).
	// +optional
	Penalty *float64 `json:"penalty,omitempty"`
	// HalfLife: the penalty halves every halfLife (default 15s).
	// +optional
	HalfLife Duration `json:"halfLife,omitempty"`
	// Suppress: above this penalty the path is not chosen (default 3500).
	// +optional
	Suppress *float64 `json:"suppress,omitempty"`
	// Reuse: a suppressed path is chosen again once its penalty is below
	// this, which must be below suppress (default 1500).
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
	// Name is the path's name in the spec.
	Name string `json:"name"`
	// Endpoint is the path's endpoint as the spec gives it (host:port).
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Address is the endpoint as resolved (ip:port).
	// +optional
	Address string `json:"address,omitempty"`
	// State is the path's health: up, down, dampened (up but not chosen
	// after flapping) or unknown.
	State PathState `json:"state"`
	// RTT is the smoothed round-trip time of the path's probes, as a
	// duration string.
	// +optional
	RTT string `json:"rtt,omitempty"`
	// Jitter is the smoothed variation of that round-trip time, as a
	// duration string.
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
	// Paths are the health of each of the spec's paths.
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
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activePath`
// +kubebuilder:printcolumn:name="Reachable",type=boolean,JSONPath=`.status.reachable`
// +kubebuilder:printcolumn:name="RTT",type=string,JSONPath=`.status.rtt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RelayPeer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the peer as the relay takes it.
	Spec RelayPeerSpec `json:"spec"`
	// Status is what the relay reports about the peer.
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
