package v1alpha1

// RelayLabel on a RelayPeer names the Relay it belongs to, so that several
// relays can share a namespace.
const RelayLabel = Group + "/relay"

// Condition types of RelayPeer and Relay status.
const (
	// ConditionReady: the spec was accepted and is applied (RelayPeer), or
	// the relay runs and serves (Relay).
	ConditionReady = "Ready"
	// ConditionReachable: at least one path to the peer is up.
	ConditionReachable = "Reachable"
	// ConditionDegraded: the active path is not the first healthy
	// preference, or some path is down.
	ConditionDegraded = "Degraded"
	// ConditionEndpointsKnown: the Relay publishes at least one endpoint.
	ConditionEndpointsKnown = "EndpointsKnown"
)

// Condition reasons. Each names a state a person can act on; the condition
// message says what to do.
const (
	ReasonApplied          = "Applied"
	ReasonInvalid          = "InvalidSpec"
	ReasonNotAllowed       = "PrefixNotAllowed"
	ReasonNameClash        = "NameClash"
	ReasonApplyFailed      = "ApplyFailed"
	ReasonPathUp           = "PathUp"
	ReasonAllPathsDown     = "AllPathsDown"
	ReasonNoPaths          = "NoPaths"
	ReasonPreferredActive  = "PreferredPathActive"
	ReasonNotPreferred     = "NotOnPreferredPath"
	ReasonPathDown         = "PathDown"
	ReasonRunning          = "Running"
	ReasonKeyRotating      = "KeyRotating"
	ReasonNotReady         = "NotReady"
	ReasonStopped          = "Stopped"
	ReasonEndpoints        = "EndpointsPublished"
	ReasonNoEndpoints      = "NoEndpoints"
	ReasonServiceNotFound  = "ServiceNotFound"
	ReasonServiceNoPort    = "ServiceHasNoUDPPort"
	ReasonServiceNoIngress = "ServiceHasNoIngress"
)

// RotateKeyAnnotation on a Relay asks its relay to rotate its private key
// in place (docs/kubernetes.md, "Keys"). Its value is an opaque token (for example a timestamp): each new
// value requests one rotation, and the relay records the last value it acted
// on in status.keyRotation.
const RotateKeyAnnotation = Group + "/rotate-key"
